/**
 * The rate controller's accounting of starts and accepted answers over sliding windows: when one
 * more start fits, and the rates sent and accepted over a span.
 */

import type { HeaderLimit } from "./headerLimit";
import { ARRIVAL_SKEW_MS, GROWTH_OVER_SENT, WINDOW_MS } from "./rateConstants";
import type { StartTicket } from "./rateTypes";

export class StartLog {
  /** Starts within the longest window bounded (oldest first), and answers accepted within one. */
  readonly #starts: StartTicket[] = [];
  readonly #accepted: number[] = [];
  #firstStart: number | undefined;
  #acceptedFrom: number | undefined;

  /** Records a start (`forget` first). */
  started(ticket: StartTicket): void {
    this.#firstStart ??= ticket.startedAt;
    this.#starts.push(ticket);
  }

  /** Records an answer accepted at `now` (`forget` first). */
  accepted(now: number): void {
    this.#accepted.push(now);
  }

  /** When one more start fits: `perWindow` within any second, a header's limit within its window. */
  windowFreeAt(now: number, perWindow: number, header: HeaderLimit | undefined): number {
    this.forget(now, header);
    let at = this.#freeAt(now, Math.max(1, Math.floor(perWindow)), WINDOW_MS);
    if (header?.counted) at = Math.max(at, this.#freeAt(now, header.limit, header.windowMs));
    return Math.max(now, at);
  }

  /** When fewer than `cap` accepted-so-far starts lie within the last `windowMs` (plus skew). */
  #freeAt(now: number, cap: number, windowMs: number): number {
    let seen = 0;
    for (let i = this.#starts.length - 1; i >= 0; i--) {
      const start = this.#starts[i] as StartTicket;
      if (start.startedAt <= now - windowMs - ARRIVAL_SKEW_MS) break;
      if (start.refused) continue;
      seen++;
      if (seen >= cap) return start.startedAt + windowMs + ARRIVAL_SKEW_MS;
    }
    return Number.NEGATIVE_INFINITY;
  }

  /** Starts per second over `spanMs` up to `ticket`'s: within `GROWTH_OVER_SENT` of its pace. */
  sentBefore(ticket: StartTicket, spanMs: number): number {
    const elapsed = ticket.startedAt - (this.#firstStart ?? ticket.startedAt);
    const span = Math.min(spanMs, Math.max(elapsed, WINDOW_MS / 4));
    let n = 0;
    for (const start of this.#starts) {
      if (start.startedAt > ticket.startedAt - span && start.startedAt <= ticket.startedAt) n++;
    }
    const sent = (n * 1000) / span;
    if (!Number.isFinite(ticket.pace)) return sent;
    // Never more than the pace; never less than the pace allows it to lead by (counts are coarse).
    return Math.min(ticket.pace, Math.max(sent, ticket.pace / GROWTH_OVER_SENT));
  }

  /**
   * Accepted per second over the last window (at least a quarter window of the run), or only since
   * `measureAcceptedFrom`'s time once that is a quarter window ago.
   */
  acceptedRate(now: number): number {
    const since = this.#acceptedFrom;
    const from =
      since !== undefined && now - since >= WINDOW_MS / 4 ? since : (this.#firstStart ?? now);
    const span = Math.min(WINDOW_MS, Math.max(now - from, WINDOW_MS / 4));
    return (this.acceptedWithin(now, span) * 1000) / span;
  }

  /**
   * `acceptedRate` counts from `at` (slow start's end: a token bucket's burst, spent in slow start,
   * is no rate), or over the whole window again for `undefined` (a block began: counted from slow
   * start's end, the time it held every start would lower the rate).
   */
  measureAcceptedFrom(at: number | undefined): void {
    this.#acceptedFrom = at;
  }

  /** Accepted per second over the last window, counted (a window's limit, never extrapolated). */
  acceptedOverWindow(now: number): number {
    return (this.acceptedWithin(now, WINDOW_MS) * 1000) / WINDOW_MS;
  }

  acceptedWithin(now: number, spanMs: number): number {
    let n = 0;
    for (let i = this.#accepted.length - 1; i >= 0; i--) {
      if ((this.#accepted[i] as number) <= now - spanMs) break;
      n++;
    }
    return n;
  }

  /** Starts per second over the last `spanMs` (at least a quarter window of the run). */
  sentRate(now: number, spanMs: number): number {
    const elapsed = now - (this.#firstStart ?? now);
    const span = Math.min(spanMs, Math.max(elapsed, WINDOW_MS / 4));
    let n = 0;
    for (let i = this.#starts.length - 1; i >= 0; i--) {
      if ((this.#starts[i] as StartTicket).startedAt <= now - span) break;
      n++;
    }
    return (n * 1000) / span;
  }

  /** Drops what lies beyond the longest window bounded. */
  forget(now: number, header: HeaderLimit | undefined): void {
    const keep = Math.max(WINDOW_MS, header?.windowMs ?? 0) + ARRIVAL_SKEW_MS;
    while (this.#starts.length > 0 && (this.#starts[0] as StartTicket).startedAt <= now - keep) {
      this.#starts.shift();
    }
    while (this.#accepted.length > 0 && (this.#accepted[0] as number) <= now - keep) {
      this.#accepted.shift();
    }
  }
}
