/**
 * lib/rate's model driven by many workers at once (docs/rate-control.md, "The cloud runtime"):
 * the workers start requests at slots of a shared clock spaced at the model's pace, and the model
 * learns in folds: a fold replays the slots started since the last one (at their times by the
 * clock's schedule) as accepted answers, then the refusals workers told, through the model's own
 * transitions. A slot is taken for accepted until a worker says otherwise: 429s are reported
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
  /** The time its slots were counted up to (ms): a fold counts those whose answers have come. */
  countedTo: number;
  /** When the slots refused and not yet counted (started after `countedTo`) started (ms). */
  refusedAhead: number[];
  /** The refusals told that the model has taken in, counted (the inbox's numbers below it). */
  refusalsFolded: number;
  /** The inbox those were counted in: one made again (expired, then told) counts from 0. */
  inboxEpoch: string | null;
}

/** A 429 one worker was answered: its request's slot, when it came, and what it said. */
export interface Refusal {
  startedAt: number;
  at: number;
  signal: Signal;
}

/** The refusals told and not yet trimmed: the first's number (counted since the first), in order. */
export interface Inbox {
  /** Made when the inbox was (absent: there is none). */
  epoch?: string;
  base: number;
  refusals: Refusal[];
}

/** How many of the inbox's refusals the model has taken in (none of an inbox made since). */
export function foldedOf(shared: SharedModelState, inbox: Inbox): number {
  return shared.inboxEpoch === (inbox.epoch ?? null) ? shared.refusalsFolded : inbox.base;
}

/** The inbox's refusals the model has not taken in, in the order they came. */
export function unfolded(shared: SharedModelState, inbox: Inbox): Refusal[] {
  const skip = Math.max(0, foldedOf(shared, inbox) - inbox.base);
  return inbox.refusals.slice(skip).sort((a, b) => a.at - b.at);
}

/**
 * The model's count after a fold of every refusal in `inbox`: never back (a query reads each item
 * as it stands, so the model may be newer than the inbox read before it).
 */
export function afterFold(shared: SharedModelState, inbox: Inbox): SharedModelState {
  const told = inbox.base + inbox.refusals.length;
  return {
    ...shared,
    refusalsFolded: Math.max(told, foldedOf(shared, inbox)),
    inboxEpoch: inbox.epoch ?? null,
  };
}

export function newSharedModel(settings: RateSettings, now: number): SharedModelState {
  return {
    model: newRateState(settings),
    startedFolded: 0,
    foldedAt: now,
    countedTo: now,
    refusedAhead: [],
    refusalsFolded: 0,
    inboxEpoch: null,
  };
}

/** The slots a fold takes in: the clock's count started by `countedTo`, and when they started. */
export interface Started {
  /** Slots of the clock started by `countedTo`, counted (`startedBy`). */
  count: number;
  /** The time (ms) the count is taken at: slots started later may still be refused. */
  countedTo?: number;
  /** The clock counted: its schedule's pieces give the slots' start times. */
  clock?: Clock;
  /**
   * How long an answer takes from its slot (ms): a slot is taken for accepted that much after it
   * started, as a 429 is at its time. At its start instead, a second's count before a 429 missed the
   * first of a window's starts, and probes under a window of 10 found 9.
   */
  answerMs?: number;
}

/**
 * The model after the slots `started` and `refusals`: each slot but the refused a request
 * accepted at its start time by the clock's schedule plus `answerMs` (a slot older than the
 * schedule's pieces kept spread evenly since the last fold's count), then each refusal at its
 * time. Spread evenly over the whole time between folds, starts held back after a cut read as a
 * lower rate, and the estimate fell 40% under the limit. Refusals come last: a slot replayed after
 * a refusal that blocks would read as a probe accepted, ending the block. A refusal holds every
 * worker (a long `Retry-After`, a window spent): they share the upstream's limit.
 */
export function fold(
  shared: SharedModelState,
  started: Started,
  now: number,
  refusals: readonly Refusal[] = [],
): SharedModelState {
  let s = shared.model;
  const to = Math.max(started.countedTo ?? now, shared.countedTo);
  const times = startTimes(shared, started, to, slotPace(s));
  // A refused slot is not taken for accepted, whichever fold counts it: most are refused after
  // `countedTo` (their answers came last), and are counted by the next fold.
  const refusedStarts = [...shared.refusedAhead, ...refusals.map((r) => r.startedAt)];
  for (const at of refusedStarts.filter((t) => t <= to)) removeNearest(times, at);
  for (const startedAt of times) {
    const at = Math.min(now, startedAt + (started.answerMs ?? 0));
    const begun = start(s, at);
    s = accepted(begun.state, begun.ticket, at);
  }
  for (const refusal of refusals) {
    const begun = start(s, refusal.at);
    // Its real start: a request sent before the last cut was refused for the old pace (rule 8).
    const ticket = { ...begun.ticket, startedAt: Math.min(refusal.startedAt, refusal.at) };
    s = refused(begun.state, ticket, refusal.at, refusal.signal, true).state;
  }
  return {
    model: s,
    startedFolded: Math.max(started.count, shared.startedFolded),
    foldedAt: now,
    countedTo: to,
    refusedAhead: refusedStarts.filter((t) => t > to),
    refusalsFolded: shared.refusalsFolded,
    inboxEpoch: shared.inboxEpoch,
  };
}

/**
 * When the slots not yet folded started, in order: by the clock's schedule, piece by piece; a slot
 * before its oldest piece kept (or with no clock) at the middles of equal parts of the time from
 * the last fold's count, no faster than the pace (the clock hands out no more).
 */
function startTimes(
  shared: SharedModelState,
  started: Started,
  to: number,
  pace: number,
): number[] {
  const first = shared.startedFolded;
  const clock = started.clock;
  const oldest = clock && pieces(clock)[0];
  const known = oldest ? Math.min(started.count, Math.max(first, oldest.fromSlot)) : started.count;
  const unknown = Math.max(0, known - first);
  const end = Math.min(to, oldest?.fromAt ?? to);
  const span = Math.max(end - shared.countedTo, (unknown * 1000) / pace);
  const times = Array.from(
    { length: unknown },
    (_, i) => end - span + (span * (i + 0.5)) / unknown,
  );
  for (let k = known; clock && k < started.count; k++) times.push(slotTime(clock, k));
  return times;
}

/** Removes the time nearest `at` from `times` (in order), if any. */
function removeNearest(times: number[], at: number): void {
  let best = -1;
  for (let i = 0; i < times.length; i++) {
    if (best < 0 || Math.abs((times[i] as number) - at) < Math.abs((times[best] as number) - at))
      best = i;
  }
  if (best >= 0) times.splice(best, 1);
}

/**
 * The latest times (ms) of something a worker does again and again: an answer from its slot (a
 * fold counts the slots started longer ago than their median, so a slot's 429 is mostly folded
 * before the slot is counted, and takes a counted slot for accepted that long after it started);
 * a claim's round trip (its slots begin once most claims are back).
 */
export class RecentTimes {
  /** Times kept: the latest this many. */
  static readonly KEPT = 16;
  /** The most any share is taken for (ms): one slow answer (a timeout) would hold back the model. */
  static readonly MOST_MS = 2_000;
  readonly #ms: number[] = [];

  add(ms: number): void {
    this.#ms.push(ms);
    if (this.#ms.length > RecentTimes.KEPT) this.#ms.shift();
  }

  /** The time `share` of those kept took at most (0 while none is). */
  upTo(share: number): number {
    const sorted = [...this.#ms].sort((a, b) => a - b);
    const at = Math.min(sorted.length - 1, Math.floor(share * sorted.length));
    return Math.min(RecentTimes.MOST_MS, sorted[at] ?? 0);
  }
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
 * What a worker last saw of the shared clock (lib/cloud/aws/slotBook.ts). Slots are numbered as
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
  /**
   * The schedule's earlier pieces still to be folded, oldest first, as `[fromSlot, fromAt, pace]`
   * after one another: each runs up to the next one's `fromSlot` (a restart or a rewrite).
   */
  past: number[];
}

/** A piece of the schedule: slot `fromSlot` starts at `fromAt`, the next ones at `pace`. */
interface Piece {
  fromSlot: number;
  fromAt: number;
  pace: number;
}

/** The schedule's pieces, oldest first: the past ones and the current. */
function pieces(clock: Clock): Piece[] {
  const past = [];
  for (let i = 0; i + 2 < clock.past.length; i += 3) {
    past.push({
      fromSlot: clock.past[i] as number,
      fromAt: clock.past[i + 1] as number,
      pace: clock.past[i + 2] as number,
    });
  }
  return [...past, { fromSlot: clock.fromSlot, fromAt: clock.fromAt, pace: clock.pace }];
}

/**
 * The past pieces a fold still needs once the slots below `folded` are taken in, with the current
 * one added when `withCurrent` (a rewrite or a restart begins a new one), and none from slot
 * `before` on (a rewrite from there supersedes them: the pieces stay in order of their slots).
 */
export function pastFrom(
  clock: Clock,
  folded: number,
  withCurrent: boolean,
  before = Number.POSITIVE_INFINITY,
): number[] {
  const all = pieces(clock);
  const kept = (withCurrent ? all : all.slice(0, -1)).filter(
    (piece, i) =>
      piece.fromSlot < before && (all[i + 1]?.fromSlot ?? Number.POSITIVE_INFINITY) > folded,
  );
  return kept.flatMap((piece) => [piece.fromSlot, piece.fromAt, piece.pace]);
}

/** When slot `index` starts by the schedule's pieces (a slot before the oldest kept: `otherwise`). */
export function slotTime(clock: Clock, index: number, otherwise = clock.fromAt): number {
  const piece = pieces(clock).findLast((p) => p.fromSlot <= index);
  return piece ? piece.fromAt + ((index - piece.fromSlot) * 1000) / piece.pace : otherwise;
}

/** Slots of the clock started by `now`, counted (those at a later time are not yet). */
export function startedBy(clock: Clock | undefined, now: number): number {
  if (!clock) return 0;
  const all = pieces(clock);
  for (const [i, piece] of all.entries()) {
    const end = Math.min(clock.claimed, all[i + 1]?.fromSlot ?? Number.POSITIVE_INFINITY);
    const due = piece.fromSlot + Math.floor(((now - piece.fromAt) * piece.pace) / 1000) + 1;
    if (piece.fromSlot < end && due < end) return Math.max(piece.fromSlot, due);
  }
  return clock.claimed;
}

/** The later view of the clock: schedules rewritten, then slots claimed, counted. */
export function later(a: Clock | undefined, b: Clock | undefined): Clock | undefined {
  if (!a || !b) return a ?? b;
  if (a.folds !== b.folds) return a.folds > b.folds ? a : b;
  return a.claimed >= b.claimed ? a : b;
}

/**
 * The clock's schedule at the model's pace from its first slot not yet started: after the last
 * started at the new spacing, and no sooner than `resumeAt`. One that would start that slot
 * sooner (a faster pace, a hold lifted) begins after the slots claimed instead: a slot's worker
 * reads its new time only a round trip and `REREAD_LEAD_MS` before the one it knows, and a slot
 * moved earlier started late, next to the one after it (windows of 10 refused seconds of 12
 * starts while the pace rose to 11). Undefined when the schedule stands (the same pace, nothing
 * to wait for beyond its next slot).
 */
export function reschedule(
  clock: Clock,
  model: RateState,
  now: number,
): Pick<Clock, "pace" | "fromSlot" | "fromAt" | "nextSlot"> | undefined {
  const pace = slotPace(model);
  const resume = resumeAt(model, now);
  const started = startedBy(clock, now);
  if (pace === clock.pace && resume <= slotTime(clock, started) + 1000 / pace) return undefined;
  const first = pieces(clock)[0] as Piece;
  const before = first.fromAt - 1000 / first.pace;
  const after = (slot: number) => Math.max(resume, slotTime(clock, slot - 1, before) + 1000 / pace);
  const earlier = after(started) < slotTime(clock, started);
  const fromSlot = earlier ? clock.claimed : started;
  const fromAt = after(fromSlot);
  return { pace, fromSlot, fromAt, nextSlot: fromAt + ((clock.claimed - fromSlot) * 1000) / pace };
}
