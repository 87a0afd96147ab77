// The rate model driven by many workers' answers in folds (lib/cloud/rateFold.ts): pure, on a
// clock passed in.
import { describe, expect, it } from "vitest";
import {
  afterFold,
  fold,
  heldUntil,
  newSharedModel,
  pastFrom,
  type Refusal,
  reschedule,
  type SharedModelState,
  slotPace,
  slotTime,
  startedBy,
  unfolded,
} from "../../lib/cloud/rateFold";
import { START_RATE } from "../../lib/rate";

const T0 = 1_000_000;
const CLOCK = {
  nextSlot: T0,
  pace: 20,
  claimed: 0,
  fromSlot: 0,
  fromAt: T0,
  foldedAt: T0,
  folds: 0,
  past: [],
};
const refusalAt = (startedAt: number, at: number): Refusal => ({ startedAt, at, signal: {} });

describe("the shared model's folds", () => {
  it("grow the pace in startup from the slots the workers started", () => {
    const shared = newSharedModel({}, T0);
    const next = fold(shared, { count: 20 }, T0 + 1_000);
    expect(slotPace(next.model)).toBeGreaterThan(START_RATE);
    expect(next.startedFolded).toBe(20);
    // Slots already taken in are not taken again.
    expect(fold(next, { count: 20 }, T0 + 1_500).model.sinceCut).toEqual(next.model.sinceCut);
  });

  it("cut the pace to what was accepted once refusals come in a window", () => {
    let shared = newSharedModel({}, T0);
    shared = fold(shared, { count: 10 }, T0 + 1_000);
    shared = fold(shared, { count: 11 }, T0 + 1_010, [
      { startedAt: T0 + 1_000, at: T0 + 1_010, signal: {} },
    ]);
    shared = fold(shared, { count: 13 }, T0 + 1_100, [
      { startedAt: T0 + 1_080, at: T0 + 1_100, signal: {} },
    ]);
    expect(shared.model.startup).toBe(false);
    expect(slotPace(shared.model)).toBeGreaterThan(5);
    expect(slotPace(shared.model)).toBeLessThanOrEqual(11);
  });

  it("take a block's refusal after the fold's own slots", () => {
    // 10 slots started in the first second, folded; 13 more in the next 100 ms, one refused with
    // a Retry-After of 3 s: the block holds. Replayed after the refusal, the fold's own slots read
    // as a probe accepted, and the block ended at once.
    const first = fold(newSharedModel({}, T0), { count: 10 }, T0 + 1_000);
    const held = fold(first, { count: 23 }, T0 + 1_100, [
      { startedAt: T0 + 1_040, at: T0 + 1_050, signal: { retryAfterMs: 3_000 } },
    ]);
    expect(heldUntil(held.model, T0 + 1_200)).toBe(T0 + 4_050);
  });

  it("learn a token bucket from folds every 100 ms at about one process's cost", () => {
    // One process's model takes in each answer as it comes, accepted or refused: folds every 5
    // ms of the answers stand for it. The workers' folds take slots started for accepted.
    const oneProcess = behindBucket(5, "answers");
    const shared = behindBucket(100, "slots");
    expect(shared.refused).toBeLessThanOrEqual(oneProcess.refused + 3);
    expect(shared.accepted).toBeGreaterThanOrEqual(oneProcess.accepted - 2);
  });

  it("settle under a slow bucket when the workers' demand is just over it", () => {
    // Ten workers' requests come at 11 to 15 a second, over the bucket's 10 but never as fast as
    // an estimate a little over it. A pace 5-10% over a limit of 10 refuses one request every 1
    // to 2 s: each was lone by a window (rule 7) and cut nothing, and the estimate settled at
    // 10.7-11.1 with 17-22 refusals in the last 40 s (2 or 3 where the demand met the pace).
    for (const demand of [11, 12, 13, 15]) {
      for (const foldEveryMs of [300, 1000]) {
        const run = demandOverBucket(demand, foldEveryMs);
        const at = `demand ${demand}, folds every ${foldEveryMs} ms`;
        expect(run.lateRefused, at).toBeLessThanOrEqual(10);
        expect(run.accepted, at).toBeGreaterThanOrEqual(0.97 * 10 * 60);
      }
    }
  });

  it("time the slots by the clock's schedule: starts held back after a cut are no lower rate", () => {
    // Startup ends at a refusal 1 s in; the schedule then holds starts back for a second (the
    // window's starts spent) and runs at 10 a second. A refusal 2 s later measures 10 a second:
    // spread evenly over the time since the last fold, the same 20 slots read as 6.8.
    let shared = fold(newSharedModel({}, T0), { count: 20 }, T0 + 1_000);
    shared = fold(shared, { count: 21 }, T0 + 1_010, [refusalAt(T0 + 1_000, T0 + 1_010)]);
    const clock = { ...CLOCK, pace: 10, claimed: 45, fromSlot: 21, fromAt: T0 + 2_010 };
    const started = { count: 41, countedTo: T0 + 3_950, clock };
    const next = fold(shared, started, T0 + 4_000, [refusalAt(T0 + 3_960, T0 + 4_000)]);
    expect(next.model.accepted.slice(-3)).toEqual([T0 + 3_710, T0 + 3_810, T0 + 3_910]);
    expect(next.model.estimate).toBeGreaterThanOrEqual(9);
  });

  it("time slots across a restart of the schedule by its past piece", () => {
    // Five slots at 10 a second from T0, then the clock stood; a claim at T0 + 2 s restarted it at
    // slot 5. Each slot is taken in at its own time, none spread over the idle second.
    const clock = {
      ...CLOCK,
      pace: 10,
      claimed: 8,
      fromSlot: 5,
      fromAt: T0 + 2_000,
      past: [0, T0, 10],
    };
    const next = fold(
      newSharedModel({}, T0),
      { count: 8, countedTo: T0 + 2_250, clock },
      T0 + 2_300,
    );
    const startedAt = next.model.levels.map((l) => l.at);
    expect(startedAt).toEqual([0, 100, 200, 300, 400, 2_000, 2_100, 2_200].map((ms) => T0 + ms));
    // Once the model has folded the five, the piece they ran on is no longer kept.
    expect(pastFrom(clock, 5, true)).toEqual([5, T0 + 2_000, 10]);
    expect(pastFrom(clock, 4, false)).toEqual([0, T0, 10]);
  });

  it("take a refused slot off the accepted in the fold that counts it", () => {
    // The 429 comes for a slot started after the count (its answer came last): the ten counted are
    // accepted; the next fold counts two more, the refused one of them.
    const first = fold(newSharedModel({}, T0), { count: 10, countedTo: T0 + 1_000 }, T0 + 1_100, [
      refusalAt(T0 + 1_050, T0 + 1_100),
    ]);
    expect(first.refusedAhead).toEqual([T0 + 1_050]);
    const accepted = (s: SharedModelState) => s.model.levels.filter((l) => !l.refused).length;
    expect(accepted(first)).toBe(10);
    const next = fold(first, { count: 12, countedTo: T0 + 1_200 }, T0 + 1_250);
    expect(next.refusedAhead).toEqual([]);
    expect(accepted(next)).toBe(11);
  });

  it("take in each worker's refusal told once, in the order they came", () => {
    const shared = { ...newSharedModel({}, T0), refusalsFolded: 6 };
    const inbox = {
      base: 5,
      refusals: [refusalAt(T0, T0 + 30), refusalAt(T0 + 10, T0 + 50), refusalAt(T0 + 20, T0 + 40)],
    };
    expect(unfolded(shared, inbox).map((r) => r.at)).toEqual([T0 + 40, T0 + 50]);
    expect(unfolded({ ...shared, refusalsFolded: 8 }, inbox)).toEqual([]);
    // A fold never counts back: the model read after the inbox may have taken in more.
    expect(afterFold({ ...shared, refusalsFolded: 9 }, inbox).refusalsFolded).toBe(9);
    expect(afterFold(shared, inbox).refusalsFolded).toBe(8);
    // An inbox made again (it expired, then a 429 was told) counts from 0: all of it is new.
    const again = { epoch: "later", base: 0, refusals: [refusalAt(T0 + 90, T0 + 99)] };
    expect(unfolded({ ...shared, inboxEpoch: "first" }, again)).toEqual(again.refusals);
  });

  it("reschedule the clock's slots not yet started at a cut, after the last started", () => {
    // 20 slots claimed at 20 a second from T0; by T0 + 500 ms, 11 have started.
    const clock = {
      nextSlot: T0 + 1_000,
      pace: 20,
      claimed: 20,
      fromSlot: 0,
      fromAt: T0,
      foldedAt: T0,
      folds: 0,
      past: [],
    };
    const cut = newSharedModel({ requestsPerSecond: 10 }, T0).model;
    const next = reschedule(clock, cut, T0 + 500);
    expect(next).toEqual({ pace: 10, fromSlot: 11, fromAt: T0 + 600, nextSlot: T0 + 1_500 });
    const after = { ...clock, ...(next ?? {}) };
    // A slot claimed before the cut starts at the new spacing; one already started keeps its time.
    expect(slotTime(after, 12)).toBe(T0 + 700);
    expect(slotTime(after, 5, slotTime(clock, 5))).toBe(T0 + 250);
    // At the same pace, with nothing to wait for, the schedule stands.
    expect(reschedule(after, cut, T0 + 650)).toBeUndefined();
  });

  it("reschedule a faster pace after the slots claimed: none moves earlier than its worker knows", () => {
    // 20 slots claimed at 10 a second from T0; by T0 + 500 ms, 6 have started. The pace doubles.
    const clock = { ...CLOCK, nextSlot: T0 + 2_000, pace: 10, claimed: 20 };
    const faster = newSharedModel({ requestsPerSecond: 20 }, T0).model;
    const next = reschedule(clock, faster, T0 + 500);
    expect(next).toEqual({ pace: 20, fromSlot: 20, fromAt: T0 + 1_950, nextSlot: T0 + 1_950 });
    const after = { ...clock, ...(next ?? {}), past: pastFrom(clock, 0, true) };
    // Slots claimed keep their times (a worker reads its slot's again only 30 ms before it).
    expect(slotTime(after, 12, 0)).toBe(T0 + 1_200);
    expect(slotTime(after, 21)).toBe(T0 + 2_000);
    // Counted by the pieces: at T0 + 1,250 ms, slots 0 to 12 have started, not the 20 claimed.
    expect(startedBy(after, T0 + 1_250)).toBe(13);
    expect(startedBy(after, T0 + 1_960)).toBe(20);
    // A cut then still reaches the slots claimed and not yet started; the faster piece it
    // supersedes is dropped, so the pieces stay in order of their slots.
    const cut = newSharedModel({ requestsPerSecond: 5 }, T0).model;
    const slower = reschedule(after, cut, T0 + 1_250);
    expect(slower).toMatchObject({ fromSlot: 13, fromAt: T0 + 1_400 });
    const past = pastFrom(after, 0, true, slower?.fromSlot);
    expect(past).toEqual([0, T0, 10]);
    const cutClock = { ...after, ...(slower ?? {}), past };
    expect(startedBy(cutClock, T0 + 1_500)).toBe(14);
    expect(slotTime(cutClock, 15, 0)).toBe(T0 + 1_800);
  });

  it("give a slot in an earlier piece its time by that piece: a cut its worker has not read yet stands", () => {
    // 20 claimed at 10 a second; at T0 + 500 a cut to 5 a second from slot 6, then at T0 + 600 a
    // faster pace, which begins after slot 19: slot 15 keeps the cut's time, not the first one.
    const clock = { ...CLOCK, nextSlot: T0 + 2_000, pace: 10, claimed: 20 };
    const cut = reschedule(clock, newSharedModel({ requestsPerSecond: 5 }, T0).model, T0 + 500);
    expect(cut).toMatchObject({ fromSlot: 6, fromAt: T0 + 700 });
    const cutClock = { ...clock, ...(cut ?? {}), past: pastFrom(clock, 0, true, cut?.fromSlot) };
    const faster = reschedule(
      cutClock,
      newSharedModel({ requestsPerSecond: 8 }, T0).model,
      T0 + 600,
    );
    expect(faster?.fromSlot).toBe(20);
    const fasterClock = {
      ...cutClock,
      ...(faster ?? {}),
      past: pastFrom(cutClock, 0, true, faster?.fromSlot),
    };
    expect(slotTime(fasterClock, 15, T0 + 1_500)).toBe(T0 + 2_500);
    expect(startedBy(fasterClock, T0 + 1_000)).toBe(8);
  });

  it("hold every start on a long Retry-After", () => {
    const shared = fold(newSharedModel({}, T0), { count: 5 }, T0 + 500, [
      { startedAt: T0 + 450, at: T0 + 500, signal: { retryAfterMs: 3_000 } },
    ]);
    expect(heldUntil(shared.model, T0 + 600)).toBe(T0 + 3_500);
    expect(heldUntil(shared.model, T0 + 3_600)).toBeUndefined();
  });

  it("keep a configured rate as the pace's ceiling", () => {
    const shared = fold(newSharedModel({ requestsPerSecond: 10 }, T0), { count: 100 }, T0 + 10_000);
    expect(slotPace(shared.model)).toBe(10);
    expect(JSON.parse(JSON.stringify(shared))).toEqual(shared);
  });
});

/**
 * 8 s of a clock starting requests at the model's pace behind `bucketOfTen`, and a fold every
 * `foldEveryMs` taking in the refusals come by then and, as accepted, the `slots` started by then
 * (what the workers' folds do) or the accepted `answers` come by then.
 */
function behindBucket(
  foldEveryMs: number,
  counted: "slots" | "answers",
): { refused: number; accepted: number } {
  let shared = newSharedModel({}, T0);
  const bucket = bucketOfTen();
  let accepted = 0;
  let refused = 0;
  let started = 0;
  let next = T0;
  for (let now = T0 + foldEveryMs; now <= T0 + 8_000; now += foldEveryMs) {
    for (; next <= now; next += 1000 / slotPace(shared.model)) {
      bucket.send(next);
      started++;
    }
    const answered = bucket.answered(now);
    const refusals = answered.refusals;
    accepted += answered.accepted;
    refused += refusals.length;
    shared = fold(
      shared,
      { count: counted === "slots" ? started : accepted + refused },
      now,
      refusals,
    );
  }
  return { refused, accepted };
}

/**
 * Workers whose requests come at `demand` a second (or the model's pace, if slower), behind
 * `bucketOfTen` for 60 s: a fold at
 * once on a refusal (as a worker folds its 429s) and otherwise every `foldEveryMs`, taking the
 * slots started for accepted. `lateRefused`: the refusals of the last 40 s.
 */
function demandOverBucket(
  demand: number,
  foldEveryMs: number,
): { lateRefused: number; accepted: number } {
  let shared = newSharedModel({}, T0);
  const bucket = bucketOfTen();
  let accepted = 0;
  let lateRefused = 0;
  let started = 0;
  let lastStart = Number.NEGATIVE_INFINITY;
  let lastFold = T0;
  for (let now = T0; now <= T0 + 60_000; now += 5) {
    if (now - lastStart >= 1000 / Math.min(demand, slotPace(shared.model))) {
      lastStart = now;
      bucket.send(now);
      started++;
    }
    const answered = bucket.answered(now);
    const refusals = answered.refusals;
    accepted += answered.accepted;
    if (now > T0 + 20_000) lateRefused += refusals.length;
    if (refusals.length > 0 || now - lastFold >= foldEveryMs) {
      shared = fold(shared, { count: started }, now, refusals);
      lastFold = now;
    }
  }
  return { lateRefused, accepted };
}

/**
 * A token bucket of 10 a second, burst 5, whose requests are answered 40 ms after their start
 * (accepted while it has a token): `send` one at `at`, `answered` those come by `now`.
 */
function bucketOfTen() {
  const bucket = { tokens: 5, at: T0 };
  let answers: { at: number; startedAt: number; ok: boolean }[] = [];
  return {
    send(at: number): void {
      bucket.tokens = Math.min(5, bucket.tokens + ((at - bucket.at) * 10) / 1000);
      bucket.at = at;
      const ok = bucket.tokens >= 1;
      if (ok) bucket.tokens--;
      answers.push({ at: at + 40, startedAt: at, ok });
    },
    answered(now: number): { accepted: number; refusals: Refusal[] } {
      const due = answers.filter((a) => a.at <= now);
      answers = answers.filter((a) => a.at > now);
      const refusals = due.filter((a) => !a.ok).map((a) => ({ ...a, signal: {} }));
      return { accepted: due.length - refusals.length, refusals };
    },
  };
}
