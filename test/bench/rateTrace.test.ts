/** The bench's summary of a run's learned-rate trace (bench/rateTrace.ts), from `--verbose` lines. */
import { describe, expect, it } from "vitest";
import { describeTrace, rateTrace } from "../../bench/rateTrace";

// Lines as `--verbose` writes them (HttpClient's `learned rate moved`), among other stderr output.
const STDERR = [
  "blackline sync: 12 jobs done",
  'debug: learned rate moved {"moved":"pace cut, edge learned","atMs":1835,"pace":96,"edge":156.8}',
  'debug: learned rate moved {"moved":"edge dropped, cap learned","atMs":2912,"pace":83.9,"inFlightCap":3}',
  'debug: learned rate moved {"moved":"pace cut, cap dropped","atMs":2994,"pace":51}',
  'debug: learned rate moved {"moved":"edge learned, blocked","atMs":3184,"pace":51,"edge":52}',
  'debug: learned rate moved {"moved":"block over","atMs":3684,"pace":51,"edge":52}',
  "debug: something else {}",
].join("\n");

describe("describeTrace", () => {
  it("sums up the moves: the last edge, a cap dropped after it was learned, the cuts and blocks", () => {
    const moves = rateTrace(STDERR);

    expect(moves).toHaveLength(5);
    expect(describeTrace(moves)).toBe(
      "edge 52 at 3.2 s; cap 3 in flight at 2.9 s, dropped at 3.0 s; 2 cuts; held 0.5 s in 1 block",
    );
  });

  it("keeps a cap that no later move dropped", () => {
    const moves = rateTrace(STDERR).filter((m) => !m.moved.includes("cap dropped"));

    expect(describeTrace(moves)).toBe(
      "edge 52 at 3.2 s; cap 3 in flight at 2.9 s; 1 cut; held 0.5 s in 1 block",
    );
  });

  it("says when an edge was dropped, and when a cap was first learned, not its raises tried since", () => {
    // A cap on trial from slow start's first 429, confirmed, then a raise tried and taken back.
    const moves = rateTrace(
      [
        'debug: learned rate moved {"moved":"edge learned, cap learned","atMs":700,"pace":55,"edge":42,"inFlightCap":2}',
        'debug: learned rate moved {"moved":"edge dropped","atMs":1000,"pace":56,"inFlightCap":2}',
        'debug: learned rate moved {"moved":"cap learned","atMs":3800,"pace":98,"inFlightCap":3}',
        'debug: learned rate moved {"moved":"cap learned","atMs":3850,"pace":98,"inFlightCap":2}',
      ].join("\n"),
    );

    expect(describeTrace(moves)).toBe(
      "edge 42 at 0.7 s, dropped at 1.0 s; cap 2 in flight at 0.7 s",
    );
  });

  it("says – for a run without a move", () => {
    expect(describeTrace(rateTrace("blackline sync: done\n"))).toBe("–");
  });
});
