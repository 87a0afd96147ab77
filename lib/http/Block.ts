/**
 * A block (`AdaptiveRate.ts`, its header): no start before `heldUntil`; then one probe at a time,
 * ever further apart, until one is accepted.
 */
import { probeIntervalMs } from "./paceSchedule";

export class Block {
  heldUntil = 0;
  active = false;
  /** When the current (or last) block began, and when the last one ended. */
  startedAt = 0;
  endedAt = Number.NEGATIVE_INFINITY;
  probeInFlight = false;

  begin(now: number): void {
    this.active = true;
    this.startedAt = now;
  }

  hold(now: number, ms: number): void {
    this.heldUntil = Math.max(this.heldUntil, now + ms);
  }

  /** A start: the probe if blocked. */
  started(): boolean {
    const probe = this.active;
    if (probe) this.probeInFlight = true;
    return probe;
  }

  /** The probe accepted: the block is over. */
  ended(now: number): void {
    this.probeInFlight = false;
    this.active = false;
    this.endedAt = now;
  }

  /** The probe refused: the next waits `Retry-After` if longer than a second, else a share of the block's age. */
  probeRefused(now: number, retryAfterMs: number | undefined): number {
    this.probeInFlight = false;
    // "Retry-After: 1" is the least the header can say: a window may end well within it.
    const longer = retryAfterMs !== undefined && retryAfterMs > 1000;
    this.hold(now, longer ? retryAfterMs : probeIntervalMs(now - this.startedAt));
    return this.heldUntil;
  }
}
