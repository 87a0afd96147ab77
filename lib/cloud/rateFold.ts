/**
 * lib/rate's model driven by many workers at once (docs/rate-control.md, "The cloud runtime"):
 * the workers start requests at slots of a shared clock spaced at the model's pace, and the model
 * learns from their answers in folds: a fold replays the answers accepted since the last one (a
 * count, spread evenly over the time between) and then a refusal, if any, through the model's own
 * transitions. Pure functions of plain data, like the model's.
 */
import {
  accepted,
  newRateState,
  type RateSettings,
  type RateState,
  refused,
  type Signal,
  start,
} from "../rate";

/** The model's state as the store keeps it, with what it has taken in of the workers' answers. */
export interface SharedModelState {
  model: RateState;
  /** The workers' count of accepted answers (it only grows) when the model last took them in. */
  acceptedFolded: number;
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
  return { model: newRateState(settings), acceptedFolded: 0, foldedAt: now };
}

/**
 * The model after the answers accepted up to `acceptedCount` (the workers' count) and then
 * `refusal`: each accepted answer a request that started and was answered at once, spread evenly
 * from the last fold to `now`. A refusal holds every worker (a long `Retry-After`, a window
 * spent): they share the upstream's limit.
 */
export function fold(
  shared: SharedModelState,
  acceptedCount: number,
  now: number,
  refusal?: Refusal,
): SharedModelState {
  let s = shared.model;
  const count = Math.max(0, acceptedCount - shared.acceptedFolded);
  const from = Math.min(shared.foldedAt, now);
  for (let i = 1; i <= count; i++) {
    const at = from + ((now - from) * i) / count;
    const started = start(s, at);
    s = accepted(started.state, started.ticket, at);
  }
  if (refusal) {
    const started = start(s, refusal.at);
    // Its real start: a request sent before the last cut was refused for the old pace (rule 8).
    const ticket = { ...started.ticket, startedAt: Math.min(refusal.startedAt, refusal.at) };
    s = refused(started.state, ticket, refusal.at, refusal.signal, true).state;
  }
  return {
    model: s,
    acceptedFolded: Math.max(acceptedCount, shared.acceptedFolded),
    foldedAt: now,
  };
}

/** The shared clock's pace, starts a second: the model's, or its ceiling while it paces nothing. */
export function slotPace(model: RateState): number {
  return model.pace ?? model.ceiling ?? Number.POSITIVE_INFINITY;
}

/** Until when every start waits (a block's hold), if later than `now`. */
export function heldUntil(model: RateState, now: number): number | undefined {
  return model.blocked && model.heldUntil !== null && model.heldUntil > now
    ? model.heldUntil
    : undefined;
}
