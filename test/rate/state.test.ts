/**
 * The rate model's state as the interface other runtimes share (lib/rate): plain JSON that
 * survives a store between transitions, of bounded size, never changed in place.
 */
import { describe, expect, it } from "vitest";
import {
  accepted,
  newRateState,
  nextStartAt,
  type RateState,
  refused,
  start,
  type Ticket,
} from "../../lib/rate";

/**
 * A client with 8 in flight against a sliding log of `limit` a second, 40 ms a request, 1 ms a
 * step; `store` is applied to the state after each transition (a round trip through a store).
 */
function drive(limit: number, ms: number, through: (s: RateState) => RateState) {
  let maxBytes = 0;
  let transitions = 0;
  const store = (next: RateState) => {
    // Its size, every 10th transition.
    if (transitions++ % 10 === 0) maxBytes = Math.max(maxBytes, JSON.stringify(next).length);
    return through(next);
  };
  let s = newRateState();
  const inFlight: Array<{ ticket: Ticket; at: number; ok: boolean }> = [];
  const admitted: number[] = [];
  const decisions: number[] = [];
  for (let t = 0; t < ms; t++) {
    for (const answer of inFlight.filter((a) => a.at === t)) {
      inFlight.splice(inFlight.indexOf(answer), 1);
      if (answer.ok) s = store(accepted(s, answer.ticket, t));
      else {
        const next = refused(s, answer.ticket, t, {
          retryAfterMs: 1000,
          retryAfterWholeSeconds: true,
        });
        s = store(next.state);
        decisions.push(next.verdict.retryAt);
      }
    }
    while (inFlight.length < 8) {
      const at = nextStartAt(s, t);
      if (at === undefined || at > t) break;
      const started = start(s, t);
      s = store(started.state);
      while ((admitted[0] ?? t) <= t - 1000) admitted.shift();
      const ok = admitted.length < limit;
      if (ok) admitted.push(t);
      inFlight.push({ ticket: started.ticket, at: t + 40, ok });
      decisions.push(t);
    }
  }
  return { state: s, decisions, maxBytes };
}

const same = (s: RateState) => s;
const viaJson = (s: RateState) => JSON.parse(JSON.stringify(s)) as RateState;

describe("the rate model's state", () => {
  it("decides the same after every transition through JSON as in memory", () => {
    const inMemory = drive(30, 12_000, same);
    const stored = drive(30, 12_000, viaJson);
    expect(stored.decisions).toEqual(inMemory.decisions);
    expect(inMemory.state.estimate).toBeGreaterThan(25);
    expect(inMemory.state.estimate).toBeLessThan(35);
  });

  it("stays bounded however long the run: its logs span 10 s at most", () => {
    const short = drive(30, 12_000, same).maxBytes;
    const long = drive(30, 30_000, same).maxBytes;
    expect(long).toBeLessThan(1.2 * short);
  });

  it("is never changed by a transition: each returns a new one", () => {
    const s = newRateState({ requestsPerSecond: 10 });
    const before = JSON.stringify(s);
    const { state, ticket } = start(s, 0);
    accepted(state, ticket, 40);
    refused(state, ticket, 40, { retryAfterMs: 5000 });
    expect(JSON.stringify(s)).toBe(before);
  });
});
