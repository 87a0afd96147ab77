import { describe, expect, it } from "vitest";
import { grownPace } from "../../lib/http/paceSchedule";
import { EDGE_SHARE, MAX_PROBE_BACKOFF, PLATEAU_MS } from "../../lib/http/rateConstants";

/** The pace `ms` after the plateau began, at an edge of `maxRate`, after one refused probe. */
const paceAfter = (ms: number, maxRate: number, probeCost: number) => {
  const plateau = EDGE_SHARE * maxRate;
  const state = { slowStart: false, maxRate, cutAt: -10_000, plateauFrom: 0, failedProbes: 1 };
  return grownPace(plateau, ms, ms - 10, { ...state, probeCost }) - plateau;
};

describe("the wait before probing above the edge again", () => {
  it("lasts until a refused probe's 429s are 1% of what the edge lets through since", () => {
    // 6 refused at an edge of 50 a second (a sliding log at 40 ms a request): 12 s (the doubling
    // alone would wait 2 s).
    expect(paceAfter(11_900, 50, 6)).toBe(0);
    expect(paceAfter(12_500, 50, 6)).toBeGreaterThan(0);
    // 1 refused: the doubling's 2 s.
    expect(paceAfter(1_900, 50, 1)).toBe(0);
    expect(paceAfter(2_500, 50, 1)).toBeGreaterThan(0);
  });

  it("never lasts longer than the doubling's longest, however slow the edge", () => {
    // 3 refused at 5 a second would wait 30 s; a limit raised meanwhile is found after 16 s.
    const longest = PLATEAU_MS * 2 ** MAX_PROBE_BACKOFF;
    expect(paceAfter(longest - 100, 5, 3)).toBe(0);
    expect(paceAfter(longest + 500, 5, 3)).toBeGreaterThan(0);
  });
});
