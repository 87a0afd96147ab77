/**
 * A client with endless work against one upstream limiter, as a discrete simulation on vitest's
 * fake clock: `concurrency` requests in flight at most, each started when the rate model (`lib/rate`) allows,
 * answered `latencyMs` after it arrives, a refused one sent again when its verdict says (the way
 * `HttpClient` and `RateLimiter` do it). Times carry a little seeded jitter (a timer fires up to
 * 1 ms late, a request takes up to 0.5 ms to arrive), and the upstream may stall now and then
 * (a busy event loop, a garbage collection: the requests that arrive meanwhile are decided
 * together when it ends), so a bucket of one sees requests closer than they were sent. With
 * `socket`, the client's own times spread as over loopback sockets (late answers and timers, a
 * busy event loop). The same seed gives the same run; nothing here reads the real clock.
 *
 * The limiter decides with the clock the fake timers set (`performance.now()`, `Date.now()`), so
 * the catalogue's limiters (`lib/simulators/limiters`: the npm libraries themselves) run here.
 */
import { vi } from "vitest";
import { parseRetryAfter } from "../../lib/http/retryPolicy";

/** What the simulators' limiters answer (`UpstreamLimiter`), or a model of one. */
export interface Upstream {
  admit(): Promise<{ accepted: boolean; headers: Record<string, string> }>;
  release(): void;
}

/** What the model paces: `RateModel` (`lib/rate`), or any controller with its four calls. */
export interface PacedController<T> {
  nextStartAt(now: number): number | undefined;
  start(now: number): T;
  accepted(ticket: T, now: number, headers: Headers): void;
  refused(
    ticket: T,
    now: number,
    retryAfterMs: number | undefined,
    headers: Headers,
  ): { retryAt: number };
}

/**
 * A client that waits by itself (timers, promises), as the AWS SDK's retry strategies do: each
 * request goes once `acquire` resolves, given the refused request it retries, if any. Its timers
 * run on the model's clock.
 */
export interface GatedClient<T> {
  acquire(retryOf?: { token: T; retryAfterMs: number | undefined }): Promise<T>;
  succeeded(token: T): void;
}

export interface ModelOptions {
  seconds: number;
  /** Stop once this many requests have been accepted. */
  stopAfterAccepted?: number;
  concurrency?: number;
  latencyMs?: number;
  seed?: number;
  /** Upstream stalls per second, each up to `stallMs` long. */
  stallsPerSecond?: number;
  stallMs?: number;
  /** The client's timing as on loopback sockets (`SOCKET_JITTER`); none unless given. */
  socket?: SocketJitter;
}

/**
 * The spread of a client's times over real sockets, drawn from its own seeded numbers (so the
 * runs without it stay as they were): an answer reaches the client `answerMs` late on average
 * (exponential), a timer fires `timerMs` late on average (exponential), and the client's event
 * loop is busy `stallsPerSecond` times a second for up to `stallMs` (uniform), when the answers and
 * timers due meanwhile all run at its end.
 */
export interface SocketJitter {
  answerMs: number;
  timerMs: number;
  stallsPerSecond: number;
  stallMs: number;
}

/**
 * Measured with `RateLimiter` and `fetch` against a limiter simulator in another process on
 * loopback (16 in flight, 40 ms answers, 2026-11-29, load 11-14): answers 40-41 ms at least, 44-49
 * median, 59-102 at the 90th percentile; a 20 ms timer 0.6-1.6 ms late median, 9-12 at the 90th
 * percentile, 43-82 at the 99th.
 */
export const SOCKET_JITTER: SocketJitter = {
  answerMs: 5,
  timerMs: 2,
  stallsPerSecond: 2,
  stallMs: 40,
};

export interface ModelRun {
  /** Answer times (ms from the start) of accepted and of refused requests. */
  accepted: number[];
  refused: number[];
  /** The most requests in flight at once. */
  peakInFlight: number;
}

/** The fake clock's time at the start of a run: `Date.now()` reads it plus the simulated ms. */
export const EPOCH = Date.parse("2026-11-24T10:00:00Z");

export function startFakeClock(): void {
  vi.useFakeTimers({ now: EPOCH, toFake: ["Date", "performance", "setTimeout", "clearTimeout"] });
}

export async function runModel<T>(
  client: PacedController<T> | GatedClient<T>,
  upstream: Upstream,
  options: ModelOptions,
): Promise<ModelRun> {
  const rate = "acquire" in client ? undefined : client;
  const gated = "acquire" in client ? client : undefined;
  const concurrency = options.concurrency ?? 16;
  const latency = options.latencyMs ?? 40;
  const random = seeded(options.seed ?? 1);
  const end = options.seconds * 1000;
  const clientTime = clientClock(
    options.socket,
    seeded(((options.seed ?? 1) * 2_654_435_761) >>> 0),
    end,
  );
  const run: ModelRun = { accepted: [], refused: [], peakInFlight: 0 };
  const events = new EventQueue();
  let clock = 0;
  let inFlight = 0;
  let stallUntil = 0;
  let stallQueue = 0;

  /** Waiting workers, and the one timer that wakes the first of them. */
  const waiting: Array<() => void> = [];
  let wakeAt = Number.POSITIVE_INFINITY;
  const pump = () => {
    while (rate && waiting.length > 0) {
      const at = rate.nextStartAt(EPOCH + clock);
      if (at === undefined) return; // an answer wakes it
      if (at > EPOCH + clock) {
        if (at < wakeAt) {
          wakeAt = at;
          events.at(clientTime.timer(at - EPOCH + random()), () => {
            wakeAt = Number.POSITIVE_INFINITY;
            pump();
          });
        }
        return;
      }
      (waiting.shift() as () => void)();
    }
  };

  const send = () => {
    if (rate) {
      waiting.push(() => begin(rate.start(EPOCH + clock)));
      pump();
    } else {
      void gated?.acquire().then(begin);
    }
  };
  const retry = (ticket: T, retryAfterMs: number | undefined) => {
    void gated?.acquire({ token: ticket, retryAfterMs }).then(begin);
  };

  const begin = (ticket: T) => {
    inFlight++;
    run.peakInFlight = Math.max(run.peakInFlight, inFlight);
    let arrival = clock + 0.1 + 0.4 * random();
    if (arrival < stallUntil) {
      stallQueue += 0.01;
      arrival = stallUntil + stallQueue;
    } else {
      stallQueue = 0;
    }
    events.at(arrival, async () => {
      const decision = await upstream.admit();
      events.at(clock + latency + random(), () => {
        if (decision.accepted) upstream.release();
        const delivered = clientTime.answer(clock + 0.1 + 0.4 * random());
        events.at(delivered, () => answer(ticket, decision));
      });
    });
  };

  const answer = (ticket: T, decision: { accepted: boolean; headers: Record<string, string> }) => {
    inFlight--;
    const headers = new Headers(decision.headers);
    if (decision.accepted) {
      run.accepted.push(clock);
      rate?.accepted(ticket, EPOCH + clock, headers);
      gated?.succeeded(ticket);
      send();
    } else {
      run.refused.push(clock);
      const retryAfter = parseRetryAfter(headers.get("retry-after"), EPOCH + clock);
      if (rate) {
        const { retryAt } = rate.refused(ticket, EPOCH + clock, retryAfter, headers);
        events.at(clientTime.timer(Math.max(clock, retryAt - EPOCH + random())), send);
      } else {
        retry(ticket, retryAfter);
      }
    }
    pump();
  };

  if (options.stallsPerSecond) {
    const stallEvery = 1000 / options.stallsPerSecond;
    const stall = () => {
      stallUntil = Math.max(stallUntil, clock + random() * (options.stallMs ?? 20));
      events.at(clock + stallEvery * 2 * random(), stall);
    };
    events.at(stallEvery * random(), stall);
  }
  // A gated client's timers are the model's events, and every promise settles before the next.
  const realSetTimeout = globalThis.setTimeout;
  if (gated) {
    globalThis.setTimeout = ((fn: () => void, ms = 0) => {
      events.at(clock + ms, fn);
      return 0;
    }) as unknown as typeof setTimeout;
  }
  const stopAfter = options.stopAfterAccepted ?? Number.POSITIVE_INFINITY;
  try {
    for (let i = 0; i < concurrency; i++) send();
    if (gated) await settle();
    for (let event = events.next(); event && event.at <= end; event = events.next()) {
      vi.advanceTimersByTime(event.at - clock);
      clock = event.at;
      await event.run();
      if (gated) await settle();
      if (run.accepted.length >= stopAfter) return run;
    }
    vi.advanceTimersByTime(end - clock);
    return run;
  } finally {
    globalThis.setTimeout = realSetTimeout;
  }
}

/**
 * When the client runs an answer or a timer due at `at`: later by the jitter's draw, or at the end
 * of the client's stall it falls in; without jitter, at `at`.
 */
function clientClock(jitter: SocketJitter | undefined, random: () => number, end: number) {
  const stalls: Array<[number, number]> = [];
  if (jitter) {
    for (let t = 0; t < end; ) {
      t += (1000 / jitter.stallsPerSecond) * 2 * random();
      stalls.push([t, t + jitter.stallMs * random()]);
    }
  }
  const exponential = (mean: number) => -mean * Math.log(1 - random());
  const afterStalls = (at: number) => {
    const stall = stalls.find(([from, to]) => at >= from && at < to);
    return stall ? stall[1] : at;
  };
  return {
    answer: (at: number) => (jitter ? afterStalls(at + exponential(jitter.answerMs)) : at),
    timer: (at: number) => (jitter ? afterStalls(at + exponential(jitter.timerMs)) : at),
  };
}

/** Every pending promise settled: `setImmediate` is not faked. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Events in time order (ties in the order they were added). */
class EventQueue {
  readonly #events: Array<{ at: number; seq: number; run: () => void | Promise<void> }> = [];
  #seq = 0;

  at(at: number, run: () => void | Promise<void>): void {
    const event = { at, seq: this.#seq++, run };
    let i = this.#events.length;
    while (i > 0 && before(event, this.#events[i - 1] as typeof event)) i--;
    this.#events.splice(i, 0, event);
  }

  next() {
    return this.#events.shift();
  }
}

function before(a: { at: number; seq: number }, b: { at: number; seq: number }): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/** xorshift32: the same numbers in [0, 1) for the same seed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 4_294_967_296;
  };
}

/** Accepted per second between `from` and `to` (ms from the start). */
export function acceptedRate(run: ModelRun, from: number, to: number): number {
  return (run.accepted.filter((t) => t >= from && t < to).length * 1000) / (to - from);
}

/** `rolling-rate-limiter`'s in-memory log: at most `limit` in any window, refusals logged too. */
export function slidingLog(limit: number, windowMs: number, say: Say): Upstream {
  let log: number[] = [];
  return {
    async admit() {
      const now = performance.now();
      log = log.filter((t) => t > now - windowMs);
      log.push(now);
      const accepted = log.length <= limit;
      const waitMs = log.length >= limit ? (log[log.length - limit] as number) + windowMs - now : 0;
      const headers: Record<string, string> = {};
      if (say.headers) {
        headers["ratelimit-limit"] = String(limit);
        headers["ratelimit-remaining"] = String(Math.max(0, limit - log.length));
        headers["ratelimit-reset"] = String(windowMs / 1000);
      }
      if (!accepted && say.retryAfter === "seconds") {
        headers["retry-after"] = String(Math.max(1, Math.ceil(waitMs / 1000)));
      }
      return { accepted, headers };
    },
    release() {},
  };
}

export interface Say {
  retryAfter: "seconds" | "date" | "none";
  headers?: "ratelimit";
}
