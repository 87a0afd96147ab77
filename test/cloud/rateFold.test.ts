// The rate model driven by many workers' answers in folds (lib/cloud/rateFold.ts): pure, on a
// clock passed in.
import { describe, expect, it } from "vitest";
import { fold, heldUntil, newSharedModel, slotPace } from "../../lib/cloud/rateFold";
import { START_RATE } from "../../lib/rate";

const T0 = 1_000_000;

describe("the shared model's folds", () => {
  it("grow the pace in startup from the slots the workers started", () => {
    const shared = newSharedModel({}, T0);
    const next = fold(shared, 20, T0 + 1_000);
    expect(slotPace(next.model)).toBeGreaterThan(START_RATE);
    expect(next.startedFolded).toBe(20);
    // Slots already taken in are not taken again.
    expect(fold(next, 20, T0 + 1_500).model.sinceCut).toEqual(next.model.sinceCut);
  });

  it("cut the pace to what was accepted once refusals come in a window", () => {
    let shared = newSharedModel({}, T0);
    shared = fold(shared, 10, T0 + 1_000);
    shared = fold(shared, 11, T0 + 1_010, [{ startedAt: T0 + 1_000, at: T0 + 1_010, signal: {} }]);
    shared = fold(shared, 13, T0 + 1_100, [{ startedAt: T0 + 1_080, at: T0 + 1_100, signal: {} }]);
    expect(shared.model.startup).toBe(false);
    expect(slotPace(shared.model)).toBeGreaterThan(5);
    expect(slotPace(shared.model)).toBeLessThanOrEqual(11);
  });

  it("hold every start on a long Retry-After", () => {
    const shared = fold(newSharedModel({}, T0), 5, T0 + 500, [
      { startedAt: T0 + 450, at: T0 + 500, signal: { retryAfterMs: 3_000 } },
    ]);
    expect(heldUntil(shared.model, T0 + 600)).toBe(T0 + 3_500);
    expect(heldUntil(shared.model, T0 + 3_600)).toBeUndefined();
  });

  it("keep a configured rate as the pace's ceiling", () => {
    const shared = fold(newSharedModel({ requestsPerSecond: 10 }, T0), 100, T0 + 10_000);
    expect(slotPace(shared.model)).toBe(10);
    expect(JSON.parse(JSON.stringify(shared))).toEqual(shared);
  });
});
