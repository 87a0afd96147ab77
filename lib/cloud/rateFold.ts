/**
 * lib/rate's model driven by many workers at once (docs/rate-control.md, "The cloud runtime"):
 * the workers start requests at slots of a shared clock spaced at the model's pace, and the model
 * learns in folds: a fold replays the slots started since the last one (a count, spread evenly over
 * the time between) as accepted answers, then the refusals workers reported, through the model's
 * own transitions. A slot is taken for accepted until a worker says otherwise: 429s are reported
 * at once, accepted answers never, so the model is not a round of reports late. Pure functions of
 * plain data, like the model's.
 */
import {
  accepted,
  newRateState,
  nextStartAt,
  type RateSettings,
  type RateState,
  refused,
  type Signal,
  start,
} from "../rate";

/** The model's state as the store keeps it, with what it has taken in of the clock's slots. */
export interface SharedModelState {
  model: RateState;
  /** The clock's count of slots started (it only grows) when the model last took them in. */
  startedFolded: number;
  /** When it did (ms). */
  foldedAt: number;
}

/** A 429 one worker was answered: its request's slot, when it came, and what it said. */
export interface Refusal {
  startedAt: number;
  at: number;
  signal: Signal;
}

export function newSharedModel(settings: RateSettings, now: number): SharedModelState {
  return { model: newRateState(settings), startedFolded: 0, foldedAt: now };
}

/**
 * The model after the slots started up to `startedCount` (the clock's count) and `refusals`: each
 * slot but the refused a request accepted as it started, spread evenly up to `now` since the last
 * fold, then each refusal at its time. Refusals come last: a slot replayed after a refusal that
 * blocks would read as a probe accepted, ending the block. A refusal holds every worker (a long
 * `Retry-After`, a window spent): they share the upstream's limit.
 */
export function fold(
  shared: SharedModelState,
  startedCount: number,
  now: number,
  refusals: readonly Refusal[] = [],
): SharedModelState {
  let s = shared.model;
  const count = Math.max(0, startedCount - shared.startedFolded - refusals.length);
  // The clock hands out no more than the pace: slots counted late are spread back from `now` at
  // it, not crowded into the time since the last fold.
  const span = Math.max(now - shared.foldedAt, (count * 1000) / slotPace(s));
  for (let i = 1; i <= count; i++) {
    const at = now - span + (span * i) / count;
    const started = start(s, at);
    s = accepted(started.state, started.ticket, at);
  }
  for (const refusal of refusals) {
    const started = start(s, refusal.at);
    // Its real start: a request sent before the last cut was refused for the old pace (rule 8).
    const ticket = { ...started.ticket, startedAt: Math.min(refusal.startedAt, refusal.at) };
    s = refused(started.state, ticket, refusal.at, refusal.signal, true).state;
  }
  const startedFolded = Math.max(startedCount, shared.startedFolded);
  return { model: s, startedFolded, foldedAt: now };
}
/** The shared clock's pace, starts a second: the model's, or its ceiling while it paces nothing. */
export function slotPace(model: RateState): number {
  return model.pace ?? model.ceiling ?? Number.POSITIVE_INFINITY;
}

/**
 * When the model lets the next start go, `now` or later: after a block's hold, and once the last
 * window's starts are fewer than the pace (rule 1), so a cut is not spent at once after the
 * starts that overshot.
 */
export function resumeAt(model: RateState, now: number): number {
  return nextStartAt(model, now) ?? heldUntil(model, now) ?? now;
}

/** Until when every start waits (a block's hold), if later than `now`. */
export function heldUntil(model: RateState, now: number): number | undefined {
  return model.blocked && model.heldUntil !== null && model.heldUntil > now
    ? model.heldUntil
    : undefined;
}

/**
 * What a worker last saw of the shared clock (lib/cloud/aws/sharedRate.ts). Slots are numbered as
 * they are claimed; slot `k` from `fromSlot` on starts at `fromAt + (k - fromSlot) / pace`, which a
 * fold rewrites, so a slot claimed before a cut or a hold starts at the new schedule's time.
 */
export interface Clock {
  /** The first slot no worker holds (ms): the schedule's time of slot `claimed`. */
  nextSlot: number;
  /** Slots a second. */
  pace: number;
  /** Slots claimed by every worker, counted. */
  claimed: number;
  /** The schedule: slot `fromSlot` starts at `fromAt` (ms). */
  fromSlot: number;
  fromAt: number;
  /** The model's last fold (ms), and the schedule's rewrites, counted. */
  foldedAt: number;
  folds: number;
}

/** When slot `index` starts, by `clock`'s schedule (a slot before `fromSlot` keeps `otherwise`). */
export function slotTime(clock: Clock, index: number, otherwise = clock.fromAt): number {
  if (index < clock.fromSlot) return otherwise;
  return clock.fromAt + ((index - clock.fromSlot) * 1000) / clock.pace;
}

/** Slots of the clock started by `now`, counted (those at a later time are not yet). */
export function startedBy(clock: Clock | undefined, now: number): number {
  if (!clock) return 0;
  const due = clock.fromSlot + Math.floor(((now - clock.fromAt) * clock.pace) / 1000) + 1;
  return Math.min(clock.claimed, Math.max(clock.fromSlot, due));
}

/** The later view of the clock: schedules rewritten, then slots claimed, counted. */
export function later(a: Clock | undefined, b: Clock | undefined): Clock | undefined {
  if (!a || !b) return a ?? b;
  if (a.folds !== b.folds) return a.folds > b.folds ? a : b;
  return a.claimed >= b.claimed ? a : b;
}

/**
 * The clock's schedule at the model's pace from its first slot not yet started: after the last
 * started at the new spacing, and no sooner than `resumeAt`. Undefined when the schedule stands
 * (the same pace, nothing to wait for beyond its next slot).
 */
export function reschedule(
  clock: Clock,
  model: RateState,
  now: number,
): Pick<Clock, "pace" | "fromSlot" | "fromAt" | "nextSlot"> | undefined {
  const pace = slotPace(model);
  const resume = resumeAt(model, now);
  const fromSlot = startedBy(clock, now);
  if (pace === clock.pace && resume <= slotTime(clock, fromSlot) + 1000 / pace) return undefined;
  const lastStart = slotTime(clock, fromSlot - 1, clock.fromAt - 1000 / clock.pace);
  const fromAt = Math.max(resume, lastStart + 1000 / pace);
  return { pace, fromSlot, fromAt, nextSlot: fromAt + ((clock.claimed - fromSlot) * 1000) / pace };
}
