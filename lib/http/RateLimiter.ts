import { setTimeout as sleep } from "node:timers/promises";

export interface RateLimiterSettings {
  /** Requests in flight at once. */
  maxConcurrency: number;
  /** Requests started per second, evenly spaced; 0 means no rate limit. */
  requestsPerSecond: number;
}

/**
 * Bounds the requests to one upstream: at most `maxConcurrency` in flight, at most
 * `requestsPerSecond` started, and none at all while a 429 asked everyone to wait (`pauseFor`).
 */
export class RateLimiter {
  readonly #settings: RateLimiterSettings;
  #inFlight = 0;
  readonly #waiting: Array<() => void> = [];
  #nextStartAt = 0;
  #pausedUntil = 0;

  constructor(settings: RateLimiterSettings) {
    if (settings.maxConcurrency < 1) throw new RangeError("maxConcurrency must be at least 1");
    this.#settings = settings;
  }

  /** Waits for a slot; call the returned function when the request is done. */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    await this.#takeConcurrencySlot();
    try {
      await this.#waitForStartTime(signal);
    } catch (error) {
      this.#release();
      throw error;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#release();
    };
  }

  /** Holds every request that has not started yet for `ms` (a 429 with or without Retry-After). */
  pauseFor(ms: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, Date.now() + ms);
  }

  async #takeConcurrencySlot(): Promise<void> {
    if (this.#inFlight < this.#settings.maxConcurrency) {
      this.#inFlight++;
      return;
    }
    // The releasing request hands its slot over directly, so #inFlight stays the same.
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#inFlight--;
  }

  async #waitForStartTime(signal: AbortSignal | undefined): Promise<void> {
    const options = signal ? { signal } : {};
    for (;;) {
      const now = Date.now();
      if (this.#pausedUntil > now) {
        await sleep(this.#pausedUntil - now, undefined, options);
        continue;
      }
      const rps = this.#settings.requestsPerSecond;
      if (rps <= 0) return;
      const slot = Math.max(now, this.#nextStartAt);
      this.#nextStartAt = slot + 1000 / rps;
      if (slot > now) await sleep(slot - now, undefined, options);
      if (this.#pausedUntil <= Date.now()) return;
    }
  }
}
