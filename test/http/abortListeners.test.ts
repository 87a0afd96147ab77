/**
 * Waits on a run's signal (`abortableWait`, `sleepUnlessAborted`): however many wait at once, one
 * listener on the signal (Node warns of a leak past 10), and nothing left behind once each wait has
 * ended, by its time, by `wake` or by the signal (no timer, no follower).
 */
import { getEventListeners } from "node:events";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { abortableWait, followersOf, sleepUnlessAborted } from "../../lib/http/abortListeners";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("waits on a shared signal", () => {
  it("add one listener to it, and leave no timer nor follower once their time is up", async () => {
    const run = new AbortController();

    const sleeps = Array.from({ length: 20 }, (_, i) => sleepUnlessAborted(10 + i, run.signal));
    expect(getEventListeners(run.signal, "abort")).toHaveLength(1);
    expect(followersOf(run.signal)).toBe(20);
    expect(vi.getTimerCount()).toBe(20);

    await vi.advanceTimersByTimeAsync(30);
    await Promise.all(sleeps);
    expect(followersOf(run.signal)).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("end at `wake` or with the signal's reason, leaving nothing behind", async () => {
    const run = new AbortController();
    const woken = abortableWait(60_000, run.signal);
    const forever = abortableWait(Number.POSITIVE_INFINITY, run.signal);
    const sleeping = sleepUnlessAborted(60_000, run.signal);
    expect(vi.getTimerCount()).toBe(2); // none for the wait without end

    woken.wake();
    await woken.done;
    expect(followersOf(run.signal)).toBe(2);
    run.abort(new Error("stopping"));

    await expect(forever.done).rejects.toThrow("stopping");
    await expect(sleeping).rejects.toThrow("stopping");
    expect(followersOf(run.signal)).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    await expect(sleepUnlessAborted(10, run.signal)).rejects.toThrow("stopping");
  });
});
