/** An episode: the answers weighed after a refusal (`AdaptiveRate.ts`, its header). */
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
  /** Every answer since it began, earlier requests' included. */
  anyAccepted: number;
  anyRefused: number;
}

type Seen = Omit<
  Episode,
  "from" | "suspect" | "accepted" | "refused" | "anyAccepted" | "anyRefused"
>;

/**
 * An episode opened at `from` by a refusal (that one counted, no answer after it yet); `quiet`:
 * none for `NOISE_QUIET_MS` before it.
 */
export function openedEpisode(from: number, quiet: boolean, seen: Seen): Episode {
  const suspect = !seen.probe && quiet && seen.sustained >= NOISE_SHARE * seen.sent;
  return { from, ...seen, suspect, accepted: [], refused: 0, anyAccepted: 0, anyRefused: 1 };
}

/** A later refusal in an episode; whether every answer since it began has been a refusal. */
export function countRefusal(episode: Episode, ticket: StartTicket, fresh: boolean): boolean {
  episode.anyRefused++;
  if (fresh && ticket.startedAt >= episode.from) episode.refused++;
  const none = episode.anyAccepted === 0 && episode.anyRefused > BLOCK_AFTER_REFUSALS;
  const nearlyNone =
    episode.refused >= BLOCK_AFTER_REFUSALS && episode.accepted.length <= 0.1 * episode.refused;
  return none || nearlyNone;
}

/** Whether an episode has enough answers to weigh, and whether they show saturation. */
export function episodeProgress(e: Episode, now: number): { done: boolean; saturated: boolean } {
  const answered = e.accepted.length + e.refused;
  const saturated = e.refused >= SATURATED_SHARE * Math.max(1, answered) && e.refused > 0;
  const done =
    now - e.from >= EPISODE_MAX_MS ||
    (now - e.from >= EPISODE_MS &&
      answered >= EPISODE_ANSWERS &&
      (!saturated || e.accepted.length >= EPISODE_ACCEPTED));
  return { done, saturated };
}

/** Accepted per second among an episode's answers: between the first and last accepted. */
export function acceptedPerSecond(e: Episode, now: number): number {
  const n = e.accepted.length;
  if (n < 2) return (n * 1000) / Math.max(1, now - e.from);
  const span = (e.accepted[n - 1] as number) - (e.accepted[0] as number);
  return ((n - 1) * 1000) / Math.max(1, span);
}
