/**
 * The rate model's state (docs/rate-model.md, "State"): one plain object, JSON as it is (no
 * `Infinity`, no class), of bounded size (`LOG_LIMIT` entries a log), so it can be stored between
 * transitions. `null` means none (no pace: not paced). Times are ms on the caller's clock.
 */
import {
  HEADER_WINDOW_MAX_MS,
  HEADROOM,
  LOG_LIMIT,
  SETTLE_MS,
  SKEW_MS,
  START_RATE,
  WINDOW_MS,
} from "./constants";

/** One request as the model saw it start: plain data, kept by the caller until its answer. */
export interface Ticket {
  readonly id: number;
  readonly startedAt: number;
  /** Requests in flight when it started, itself included. */
  readonly level: number;
  /** The request sent alone to find out whether a block is over. */
  readonly probe: boolean;
}

export interface RateState {
  readonly version: 1;
  /** The configured requests per second: never exceeded. */
  ceiling: number | null;
  /** Requests per second at which starts are spaced; `null`: not paced. */
  pace: number | null;
  /** The limit estimated, requests per second; `null` until a refusal or a header says. */
  estimate: number | null;
  /** True until the first refusal that cuts. */
  startup: boolean;
  /** The last cut of the pace (ms). */
  cutAt: number | null;
  /** Time since the cut (ms) the pace let a start go, none came, none was in flight: rule 6. */
  idleMs?: number;
  /** The last time the pace grew or was cut (ms). */
  lastUpdate: number | null;
  /** GCRA: the theoretical time of the next start (ms). */
  nextStart: number | null;
  /** Probes above the estimate refused since it was learned (and blocks): the hold doubles. */
  failedProbes: number;
  /** Rule 7: since when cuts are judged, the share refused the window before, the estimate then. */
  judgedFrom: number | null;
  shareBefore: number;
  estimateBefore: number | null;
  /** The estimate is slow start's exit's, what was sent and never measured: rule 7 restores no such. */
  exitEstimate?: boolean;
  /** A share of answers refused whatever the pace (0 until learned): no cut at or under it. */
  noiseShare: number;
  /** The last refusal of a probe above the estimate (ms). */
  probeRefusedAt: number | null;
  /** Rule 9: a probe's find, the estimate before it and the probes refused then; to the next cut. */
  raised?: { from: number; failedProbes: number } | null;
  /** Times of the last 2 x `ESTIMATE_ANSWERS` answers accepted since the last cut. */
  sinceCut: number[];
  /** Refusals since the last accepted answer, a cap's aside. */
  refusedInARow: number;
  lastRefusal: number | null;
  nextId: number;
  firstStart: number | null;
  /** Starts over the last window (or a header's): time, ticket id, refused. */
  starts: Array<{ at: number; id: number; refused: boolean }>;
  /** Accepted answers over the last window (or a header's). */
  accepted: number[];
  inFlight: number;
  /** The cap on requests in flight learned; `null`: none. */
  cap: number | null;
  /** The answers to the requests started over the last `HEADER_WINDOW_MAX_MS`: start, level, refused. */
  levels: Array<{ at: number; level: number; refused: boolean }>;
  /** A block: every start held until `heldUntil`, then one probe at a time. */
  blocked: boolean;
  blockFrom: number;
  heldUntil: number | null;
  probeOut: boolean;
  blockEndedAt: number | null;
  acceptedSinceBlock: number;
  /** The block began in the tail of another: its own end has no tail. */
  blockInTail: boolean;
  /** The block's end its first long `Retry-After` said (ms): the hold when no guess is made. */
  blockEnd: number | null;
  /** The latest time the window is known to end after: a whole-second `Retry-After`'s last second. */
  windowEndsAfter: number | null;
  /** A probe at a guessed window end was refused: the block makes no other guess. */
  guessRefused: boolean;
  /** When a fixed window opened at the latest: the first accepted answer, each block's end. */
  windowFrom: number | null;
  /** A `RateLimit-Limit` shown to count these requests: starts within its window stay under it. */
  header: { limit: number; windowMs: number; counted: boolean } | null;
  /** A header limit that more accepted answers within its window disproved: not taken again. */
  headerDisproved: number | null;
}

export interface RateSettings {
  /** Unset: learn from `START_RATE`; 0: no pace until a refusal; N: start at N, never exceed it. */
  requestsPerSecond?: number | undefined;
}

export function newRateState(settings: RateSettings = {}): RateState {
  const configured = settings.requestsPerSecond;
  const ceiling = configured !== undefined && configured > 0 ? configured : null;
  return {
    version: 1,
    ceiling,
    pace: configured === undefined ? START_RATE : ceiling,
    estimate: null,
    startup: true,
    cutAt: null,
    lastUpdate: null,
    nextStart: null,
    failedProbes: 0,
    probeRefusedAt: null,
    judgedFrom: null,
    shareBefore: 0,
    estimateBefore: null,
    noiseShare: 0,
    sinceCut: [],
    refusedInARow: 0,
    lastRefusal: null,
    nextId: 0,
    firstStart: null,
    starts: [],
    accepted: [],
    inFlight: 0,
    cap: null,
    levels: [],
    blocked: false,
    blockFrom: 0,
    heldUntil: null,
    probeOut: false,
    blockEndedAt: null,
    acceptedSinceBlock: 0,
    blockInTail: false,
    blockEnd: null,
    windowEndsAfter: null,
    guessRefused: false,
    windowFrom: null,
    header: null,
    headerDisproved: null,
  };
}

/** A copy to change: transitions never change the state they are given. */
export function copyState(s: RateState): RateState {
  return {
    ...s,
    sinceCut: [...s.sinceCut],
    starts: [...s.starts],
    accepted: [...s.accepted],
    levels: [...s.levels],
    header: s.header && { ...s.header },
  };
}

export const orInfinity = (n: number | null): number => n ?? Number.POSITIVE_INFINITY;
export const orNever = (n: number | null): number => n ?? Number.NEGATIVE_INFINITY;

/** Appends, dropping the oldest past `limit`. */
export function push<T>(log: T[], entry: T, limit = LOG_LIMIT): void {
  log.push(entry);
  if (log.length > limit) log.splice(0, log.length - limit);
}

/**
 * Drops what the logs no longer need at `now`: their span is a window, or a header's window when
 * one is known (at most 10 s); `SKEW_MS` of arrival skew is kept with the starts.
 */
export function forget(s: RateState, now: number): void {
  const span = Math.min(HEADER_WINDOW_MAX_MS, Math.max(WINDOW_MS, s.header?.windowMs ?? 0));
  while ((s.starts[0]?.at ?? now) <= now - span - SKEW_MS) s.starts.shift();
  while ((s.accepted[0] ?? now) <= now - span) s.accepted.shift();
  while ((s.levels[0]?.at ?? now) < now - HEADER_WINDOW_MAX_MS) s.levels.shift();
}

/** Starts per second over the last `ms` (`SETTLE_MS` at least, or the run so far). */
export function sentRate(s: RateState, now: number, ms: number): number {
  const span = Math.min(ms, Math.max(now - (s.firstStart ?? now), SETTLE_MS));
  return (s.starts.filter((x) => x.at > now - span).length * 1000) / span;
}

/** Accepted answers within the last `ms`. */
export function acceptedWithin(s: RateState, now: number, ms: number): number {
  return s.accepted.filter((t) => t > now - ms).length;
}

/** Accepted per second over the last window, counted (over the run so far, if shorter). */
export function acceptedOverWindow(s: RateState, now: number): number {
  const span = Math.min(WINDOW_MS, Math.max(now - (s.firstStart ?? now), SETTLE_MS));
  return (acceptedWithin(s, now, WINDOW_MS) * 1000) / span;
}

/** Accepted per second since the last cut, over its last answers (`minimum` of them at least). */
export function rateSinceCut(s: RateState, minimum: number): number | undefined {
  const n = s.sinceCut.length;
  const span = n >= 2 ? (s.sinceCut[n - 1] as number) - (s.sinceCut[0] as number) : 0;
  return n >= minimum && span > 0 ? ((n - 1) * 1000) / span : undefined;
}

/** Of the answers to requests started since `from`: how many, how many refused, and the share. */
export function refusedShare(s: RateState, from: number) {
  const answers = s.levels.filter((a) => a.at > from);
  const refused = answers.filter((a) => a.refused).length;
  return { share: refused / Math.max(1, answers.length), answers: answers.length, refused };
}

/** A new estimate, and the pace under it (never over the ceiling, nor under 1 a second). */
export function cut(s: RateState, now: number, estimate: number, pace = HEADROOM * estimate): void {
  s.startup = false;
  s.estimate = estimate;
  s.pace = Math.min(orInfinity(s.ceiling), Math.max(1, pace));
  s.cutAt = now;
  s.idleMs = 0;
  s.lastUpdate = now;
  s.sinceCut = [];
  s.exitEstimate = false;
  s.raised = null;
}

/** The pace held under the estimate. */
export const plateau = (s: RateState): number => HEADROOM * orInfinity(s.estimate);

/** Rule 1: when one more start fits within any window (a header's too; refused ones not counted). */
export function windowFreeAt(s: RateState): number {
  const pace = orInfinity(s.pace);
  const top = Math.max(pace, Math.min(orInfinity(s.estimate), pace / HEADROOM));
  const perWindow = Math.max(1, Math.floor(Math.min(orInfinity(s.ceiling), top)));
  const live = s.starts.filter((x) => !x.refused);
  const freeAt = (limit: number, windowMs: number) =>
    orNever(live[live.length - limit]?.at ?? null) + windowMs + SKEW_MS;
  const header = s.header;
  return Math.max(
    freeAt(perWindow, WINDOW_MS),
    header?.counted ? freeAt(header.limit, header.windowMs) : Number.NEGATIVE_INFINITY,
  );
}
