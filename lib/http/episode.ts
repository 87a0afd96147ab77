/** An episode: the answers weighed after a refusal (docs/rate-model.md, rules 11 to 16). */
import {
  BLOCK_AFTER_REFUSALS,
  EPISODE_ACCEPTED,
  EPISODE_ANSWERS,
  EPISODE_MAX_MS,
  EPISODE_MS,
  NOISE_SHARE,
  SATURATED_SHARE,
} from "./rateConstants";
import type { StartTicket } from "./rateTypes";

/** The answers weighed after a refusal, to tell saturation from an edge just crossed. */
export interface Episode {
  from: number;
  /**
   * Slow start's exit: first the answers of the requests already in flight when it was refused
   * (sent from the refused one's start until this time), at the pace that crossed the edge.
   */
  inFlightUntil?: number;
  /** The rate the refused request was sent at: starts per second over `SENT_SPAN_MS` before it. */
  sent: number;
  /** Accepted per second over the window before it. */
  acceptedRate: number;
  /** The first refusal after slow start. */
  exit: boolean;
  /** A refusal while the pace probed above the learned edge: back to the plateau, the edge kept. */
  probe: boolean;
  /** Within a window of a block's end: what it refuses is the block's tail (a log still full). */
  afterBlock: boolean;
  /** The rate sent over the window before it, if that window had no refusal (else 0). */
  sustained: number;
  /** A refusal at a rate held a window without one: noise unless another follows. */
  suspect: boolean;
  /** Answers of requests sent after it began: accepted (their times) and refused. */
  accepted: number[];
  refused: number;
  /** The paces those requests were sent at, summed. */
  paces: number;
  /** Every answer since it began, earlier requests' included. */
  anyAccepted: number;
  anyRefused: number;
}

type Seen = Omit<
  Episode,
  | "from"
  | "inFlightUntil"
  | "suspect"
  | "accepted"
  | "refused"
  | "paces"
  | "anyAccepted"
  | "anyRefused"
>;

/**
 * An episode opened at `from` by a refusal (that one counted, no answer after it yet); `quiet`:
 * none for `NOISE_QUIET_MS` before it.
 */
export function openedEpisode(from: number, quiet: boolean, seen: Seen): Episode {
  const suspect = !seen.probe && quiet && seen.sustained >= NOISE_SHARE * seen.sent;
  return {
    from,
    ...seen,
    suspect,
    accepted: [],
    refused: 0,
    paces: 0,
    anyAccepted: 0,
    anyRefused: 1,
  };
}

/**
 * Slow start's exit, refused at `now` for `ticket`: weighs first the answers of the requests in
 * flight (`inFlightUntil`), sent at the pace that crossed the edge. With answers that take long
 * there are enough of them to measure a saturated upstream's rate before any request sent after
 * the exit is answered (a token bucket emptied by slow start: about 15 in flight at 200 ms).
 */
export function exitEpisode(ticket: StartTicket, now: number, seen: Seen): Episode {
  return { ...openedEpisode(ticket.startedAt, false, seen), inFlightUntil: now };
}

/** Whether `ticket` was in flight at an exit episode's 429: sent at the old pace, weighed first. */
export function inFlightAtExit(e: Episode | undefined, ticket: StartTicket): boolean {
  return e?.inFlightUntil !== undefined && ticket.startedAt < e.inFlightUntil;
}

/**
 * Whether the answer to `ticket` is weighed. The first answer of a request sent after an exit
 * episode's in-flight requests, if their answers did not settle it (saturation, 8 accepted, a
 * cut called for: `weigh`, episodeDecisions.ts), starts it over on the requests sent since (as any
 * episode).
 */
export function weighs(e: Episode, ticket: StartTicket): boolean {
  if (e.inFlightUntil !== undefined && !inFlightAtExit(e, ticket)) {
    e.from = e.inFlightUntil;
    e.inFlightUntil = undefined;
    e.accepted = [];
    e.refused = 0;
    e.paces = 0;
  }
  return ticket.startedAt >= e.from;
}

/** An answer accepted at `now` that the episode weighs (`weighs`). */
export function countAccepted(episode: Episode, ticket: StartTicket, now: number): void {
  episode.accepted.push(now);
  episode.paces += ticket.pace;
}

/** A later refusal in an episode; whether every answer since it began has been a refusal. */
export function countRefusal(episode: Episode, ticket: StartTicket, fresh: boolean): boolean {
  episode.anyRefused++;
  if (fresh && weighs(episode, ticket)) {
    episode.refused++;
    episode.paces += ticket.pace;
  }
  const none = episode.anyAccepted === 0 && episode.anyRefused > BLOCK_AFTER_REFUSALS;
  const nearlyNone =
    episode.refused >= BLOCK_AFTER_REFUSALS && episode.accepted.length <= 0.1 * episode.refused;
  return none || nearlyNone;
}

/** Whether an episode has enough answers to weigh, and whether they show saturation. */
export function episodeProgress(e: Episode, now: number): { done: boolean; saturated: boolean } {
  const answered = e.accepted.length + e.refused;
  const saturated = e.refused >= SATURATED_SHARE * Math.max(1, answered) && e.refused > 0;
  if (e.inFlightUntil !== undefined) {
    const enough = answered >= EPISODE_ANSWERS && e.accepted.length >= EPISODE_ACCEPTED;
    return { done: saturated && enough, saturated };
  }
  const done =
    now - e.from >= EPISODE_MAX_MS ||
    (now - e.from >= EPISODE_MS &&
      answered >= EPISODE_ANSWERS &&
      (!saturated || e.accepted.length >= EPISODE_ACCEPTED));
  return { done, saturated };
}

/** The mean pace an episode's weighed requests were sent at. */
export function meanPace(e: Episode): number {
  return e.paces / Math.max(1, e.accepted.length + e.refused);
}

/**
 * Accepted per second among an episode's answers: between the first and last accepted, so two at
 * least (`undefined` below). Counted over the time since the episode began, one answer 0.76 s
 * after a window of 5 a second refused, met part spent at 200 ms a request, made an edge of 1.3.
 */
export function acceptedPerSecond(e: Episode): number | undefined {
  const n = e.accepted.length;
  if (n < 2) return undefined;
  const span = (e.accepted[n - 1] as number) - (e.accepted[0] as number);
  return ((n - 1) * 1000) / Math.max(1, span);
}
