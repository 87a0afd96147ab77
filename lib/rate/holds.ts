/**
 * What holds starts besides the pace (docs/rate-model.md, rules 12 to 14): a cap in flight, a block
 * and its probes, a `RateLimit-*` header's limit; on a state a transition (`model.ts`) is changing.
 */
import {
  BLOCKING_MS,
  ESTIMATE_ANSWERS,
  FIRST_PROBE_MS,
  HEADER_WINDOW_MAX_MS,
  HEADROOM,
  STARTUP_CAP_LEVEL,
  WINDOW_MS,
} from "./constants";
import type { Signal } from "./signal";
import {
  acceptedWithin,
  cut,
  orInfinity,
  orNever,
  push,
  type RateState,
  type Ticket,
} from "./state";

/**
 * Rule 13: an answer's bookkeeping; for a refusal, whether a cap in flight explains it (learned
 * here; a refusal under the cap drops it: it was a rate's).
 */
export function answered(s: RateState, ticket: Ticket, refused: boolean): boolean {
  s.inFlight--;
  push(s.levels, { at: ticket.startedAt, level: ticket.level, refused });
  if (!refused) return false;
  if (ticket.level > orInfinity(s.cap)) return true;
  if (s.cap !== null) {
    s.cap = null;
    return false;
  }
  const level = ticket.level;
  const below = s.levels.filter((a) => a.level < level);
  const above = s.levels.filter((a) => a.level >= level);
  const refusedAbove = above.filter((a) => a.refused).length;
  if (
    level >= 2 &&
    (refusedAbove >= 2 || (s.startup && level <= STARTUP_CAP_LEVEL)) &&
    below.length >= ESTIMATE_ANSWERS &&
    !below.some((a) => a.refused) &&
    above.length - refusedAbove <= 1
  ) {
    s.cap = level - 1;
    return true;
  }
  return false;
}

/** Rule 14: a `RateLimit-Limit` counting these requests is the estimate; `Remaining: 0` blocks. */
export function learnFromHeaders(s: RateState, signal: Signal, now: number): void {
  const { limit, remaining, resetMs } = signal.limit ?? {};
  if (
    limit !== undefined &&
    limit >= 2 &&
    limit !== s.headerDisproved &&
    resetMs !== undefined &&
    resetMs >= WINDOW_MS
  ) {
    const previous = s.header;
    const windowMs = Math.max(previous?.windowMs ?? 0, resetMs);
    const counted =
      (previous?.limit === limit && previous.counted) ||
      (remaining !== undefined && remaining <= limit / 2);
    s.header = windowMs <= HEADER_WINDOW_MAX_MS ? { limit, windowMs, counted } : null;
  }
  const header = s.header;
  if (header?.counted) {
    if (acceptedWithin(s, now, header.windowMs) > header.limit + 1) {
      s.headerDisproved = header.limit;
      s.header = null;
    } else {
      const rate = (header.limit * 1000) / header.windowMs;
      if (rate < orInfinity(s.estimate))
        cut(s, now, rate, Math.min(orInfinity(s.pace), HEADROOM * rate));
    }
  }
  if (remaining === 0 && resetMs !== undefined && resetMs >= BLOCKING_MS) {
    if (!s.blocked) beginBlock(s, now, resetMs);
    s.heldUntil = Math.max(orNever(s.heldUntil), now + resetMs);
  }
}

/** Every start held until `now + ms`, then one probe at a time. */
export function beginBlock(s: RateState, now: number, ms: number): void {
  s.blocked = true;
  s.blockFrom = now;
  s.heldUntil = now + ms;
  s.blockEnd = s.heldUntil;
  s.windowEndsAfter = null;
  s.guessRefused = false;
}

/**
 * Rule 12: a whole-second `Retry-After` is rounded up (its window ends in its last second); the
 * probe goes at the next whole second from `windowFrom`, unless within `FIRST_PROBE_MS` of the end.
 */
export function guessWindowEnd(s: RateState, ticket: Ticket, signal: Signal): void {
  const retryAfterMs = signal.retryAfterMs;
  if (!signal.retryAfterWholeSeconds || retryAfterMs === undefined || s.windowFrom === null) return;
  const endsAfter = Math.max(orNever(s.windowEndsAfter), ticket.startedAt + retryAfterMs - 1000);
  s.windowEndsAfter = endsAfter;
  if (s.guessRefused || s.blockEnd === null) return;
  const seconds = Math.max(1, Math.floor((endsAfter - s.windowFrom) / 1000) + 1);
  const guess = s.windowFrom + seconds * 1000;
  s.heldUntil = guess <= s.blockEnd - FIRST_PROBE_MS ? Math.max(guess, endsAfter) : s.blockEnd;
}
