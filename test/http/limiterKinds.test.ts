/**
 * The learned rate against every limiter kind of the simulators' catalogue, on a fake clock
 * (`upstreamModel.ts`): 30 simulated seconds of endless work, 16 in flight at most, 40 ms a
 * request, nothing configured. The token bucket, the fixed window and the cap in flight are the
 * catalogue's own (`createLimiter`: the npm libraries `limiter` and `rate-limiter-flexible`, whose
 * clocks vitest fakes); the sliding log is a model of `rolling-rate-limiter`'s
 * (`upstreamModel.ts`), because that library reads `microtime`, which no fake clock reaches. Each kind is asserted to
 * keep most of its rate with few 429s, in each way it can say no (`Retry-After` in seconds, as a
 * date, none, `RateLimit-*` headers), which the controller before issue 16 did not (a bucket of
 * one held it at a tenth of the rate, a bucket of 50 cost over a hundred 429s).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RateModel } from "../../lib/rate";
import { createLimiter, type LimiterSettings } from "../../lib/simulators/limiters";
import {
  acceptedRate,
  EPOCH,
  type ModelOptions,
  runModel,
  type Say,
  SOCKET_JITTER,
  slidingLog,
  startFakeClock,
  type Upstream,
} from "./upstreamModel";

beforeEach(startFakeClock);
afterEach(() => {
  vi.useRealTimers();
});

const SAYS: Array<[string, Say]> = [
  ["Retry-After in seconds", { retryAfter: "seconds" }],
  ["Retry-After as a date", { retryAfter: "date" }],
  ["no Retry-After", { retryAfter: "none" }],
  ["RateLimit headers, no Retry-After", { retryAfter: "none", headers: "ratelimit" }],
];

interface Kind {
  name: string;
  upstream: (say: Say) => Upstream;
  /** Requests per second the limiter sustains. */
  rate: number;
  /** Accepted per second from 5 s to 30 s, at least, as a share of `rate`. */
  share: number;
  /** 429s in all, at most (about 2% of the requests, unless said). */
  refusals: number;
  /** A window's limit, told by `RateLimit-*` headers, is kept without a single 429. */
  windowed?: boolean;
  /** The cap on requests in flight learned (none for a limit of the rate). */
  cap?: number;
  model?: Partial<ModelOptions>;
}

const catalogue = (settings: LimiterSettings) => (say: Say) =>
  createLimiter({ ...settings, ...say }) as Upstream;

const KINDS: Kind[] = [
  {
    // Any two requests that arrive closer than 20 ms: the stalls refuse a few at any pace, and the
    // model probes above what startup's exit measured slowly (73% from 5 to 30 s; the fake-clock
    // matrix's 578-request run: 1.30 x the floor, as before).
    name: "token bucket of 50/s, burst 1 (nginx limit_req), upstream stalls of up to 20 ms",
    upstream: catalogue({ kind: "token_bucket", ratePerSecond: 50, burst: 1 }),
    rate: 50,
    share: 0.7,
    refusals: 30,
    model: { stallsPerSecond: 1, stallMs: 20 },
  },
  {
    name: "token bucket of 50/s, burst 5",
    upstream: catalogue({ kind: "token_bucket", ratePerSecond: 50, burst: 5 }),
    rate: 50,
    share: 0.95,
    refusals: 30,
  },
  {
    name: "token bucket of 50/s, burst 50",
    upstream: catalogue({ kind: "token_bucket", ratePerSecond: 50, burst: 50 }),
    rate: 50,
    share: 0.95,
    refusals: 40,
  },
  {
    name: "fixed window of 50 per second",
    upstream: catalogue({ kind: "fixed_window", limit: 50, windowSeconds: 1 }),
    rate: 50,
    share: 0.95,
    refusals: 40,
    windowed: true,
  },
  {
    // Each window is spent at full speed, as soon as it opens: from 5 s to 30 s, the two windows
    // that open at 10 s and 20 s. Each end refuses the 16 in flight, and the probes.
    name: "fixed window of 500 per 10 s",
    upstream: catalogue({ kind: "fixed_window", limit: 500, windowSeconds: 10 }),
    rate: 1000 / 25,
    share: 0.99,
    refusals: 115,
    windowed: true,
  },
  {
    name: "sliding log of 50 per second (refusals count)",
    upstream: (say) => slidingLog(50, 1000, say),
    rate: 50,
    share: 0.9,
    refusals: 40,
    windowed: true,
  },
  {
    // 2 in flight for 41 ms each (40 ms, and the way there and back): 48.8 a second at most.
    name: "cap of 2 in flight",
    upstream: catalogue({ kind: "in_flight", maxInFlight: 2 }),
    rate: 2000 / 41,
    share: 0.95,
    refusals: 15,
    cap: 2,
  },
];

describe("RateModel against each limiter kind, nothing configured", () => {
  for (const kind of KINDS) {
    describe(kind.name, () => {
      for (const [sayName, say] of SAYS) {
        const most = say.headers && kind.windowed ? 0 : kind.refusals;
        it(`${sayName}: keeps ${kind.share * 100}% of its rate, ${most} 429s at most in 30 s, cap ${kind.cap ?? "none"}`, async () => {
          // Prepare
          const rate = new RateModel();

          // Act
          const run = await runModel(rate, kind.upstream(say), { seconds: 30, ...kind.model });

          // Assess
          expect(acceptedRate(run, 5000, 30_000)).toBeGreaterThanOrEqual(kind.share * kind.rate);
          expect(run.refused.length).toBeLessThanOrEqual(most);
          expect(rate.concurrency).toBe(kind.cap ?? Number.POSITIVE_INFINITY);
        });
      }
    });
  }
});

describe("RateModel against refusals that do not depend on the rate", () => {
  it("a server refusing every 5th request (no Retry-After) keeps a sequential client within 70% of its demand", async () => {
    // Prepare: one request at a time, 80 ms each (the Valimail sync's pages): about 12.3 a second.
    let answered = 0;
    const everyFifth: Upstream = {
      async admit() {
        answered++;
        return { accepted: answered % 5 !== 0, headers: {} };
      },
      release() {},
    };
    const rate = new RateModel();
    const demand = 1000 / 81;

    // Act
    const run = await runModel(rate, everyFifth, { seconds: 30, concurrency: 1, latencyMs: 80 });

    // Assess: a pace cut at each 429 fell to 1 request a second before the fix.
    const sent = run.accepted.length + run.refused.length;
    const sentLate = [...run.accepted, ...run.refused].filter((t) => t >= 5000).length / 25;
    expect(sentLate).toBeGreaterThanOrEqual(0.7 * demand);
    expect(rate.rate).toBeGreaterThanOrEqual(0.7 * demand);
    expect(sent).toBeGreaterThanOrEqual(0.7 * demand * 30);
  });

  it("a slow token bucket behind a server refusing a share of its own keeps 90% of the rate the two leave", async () => {
    // Every 15th, 30th or 60th request refused whatever the pace, before a token bucket of 10 or
    // 20 a second (burst 5): a share of refusals beside a limit. Before rule 7 counted answers
    // since the last refusal, and its judgment the share since the refusal before, these kept
    // 8.3 to 8.9 a second behind the bucket of 10, and 13.8 behind 20 with every 15th refused
    // (in between, an answer count alone took every 30th for a limit: 4.4 a second).
    for (const rate of [10, 20]) {
      for (const every of [15, 30, 60]) {
        for (const seed of [1, 2]) {
          vi.useRealTimers();
          startFakeClock();
          const bucket = createLimiter({
            kind: "token_bucket",
            ratePerSecond: rate,
            burst: 5,
          }) as Upstream;
          let answered = 0;
          const upstream: Upstream = {
            async admit() {
              answered++;
              return answered % every === 0 ? { accepted: false, headers: {} } : bucket.admit();
            },
            release: () => bucket.release(),
          };

          const run = await runModel(new RateModel(), upstream, { seconds: 60, seed });

          const kept = acceptedRate(run, 10_000, 60_000) / (rate * (1 - 1 / every));
          expect(kept, `${rate}/s, every ${every}th refused, seed ${seed}`).toBeGreaterThanOrEqual(
            0.9,
          );
        }
      }
    }
  });

  it("an outage after refusals that do not depend on the rate: blocked, not refused at the full pace", async () => {
    // Prepare: every fifth request refused, then every request for 10 s from 10 s (a quota
    // spent, an outage), no Retry-After, 16 in flight.
    let answered = 0;
    const upstream: Upstream = {
      async admit() {
        const now = Date.now() - EPOCH;
        if (now >= 10_000 && now < 20_000) return { accepted: false, headers: {} };
        answered++;
        return { accepted: answered % 5 !== 0, headers: {} };
      },
      release() {},
    };

    // Act
    const run = await runModel(new RateModel(), upstream, { seconds: 30, latencyMs: 40 });

    // Assess: the 16 in flight, then probes a tenth of the block's age apart.
    expect(run.refused.filter((t) => t >= 10_000 && t < 20_000).length).toBeLessThanOrEqual(40);
    expect(run.accepted.filter((t) => t >= 20_000).length).toBeGreaterThan(0);
  });
});

/** A seeded run against `upstream` with a fresh rate, afresh on the fake clock. */
async function freshRun(upstream: Upstream, options: ModelOptions) {
  vi.useRealTimers();
  startFakeClock();
  const rate = new RateModel();
  const run = await runModel(rate, upstream, options);
  return { rate, run };
}

/** A token bucket of 50/s, burst 50, no `Retry-After`, with upstream stalls. */
function bucketOf50(seed: number, options: Partial<ModelOptions>) {
  const bucket = catalogue({ kind: "token_bucket", ratePerSecond: 50, burst: 50 });
  return freshRun(bucket({ retryAfter: "none" }), {
    seconds: 10,
    seed,
    stallsPerSecond: 2,
    stallMs: 30,
    ...options,
  });
}

/** Answers of 200 ms, with small upstream stalls. */
const SLOW_ANSWERS = { latencyMs: 200, stallsPerSecond: 1, stallMs: 10 };

describe("RateModel against a rate limit that looks like a cap in flight", () => {
  it("keeps no cap from a token bucket's overshoot, whose 429s come when most are in flight", async () => {
    // A bucket of 50 with stalls: 2 of these 4 seeds ended with a cap of 3 or 5 before the fix.
    for (const seed of [1, 2, 3, 4]) {
      const { rate, run } = await bucketOf50(seed, {});

      expect(rate.concurrency).toBe(Number.POSITIVE_INFINITY);
      expect(acceptedRate(run, 5000, 10_000)).toBeGreaterThanOrEqual(0.95 * 50);
    }
  });

  it("keeps no cap from a fixed window's refusals at 200 ms a request: slow start's overshoot is no evidence", async () => {
    // A window of 50 a second: slow start's overshoot took 16 429s at 16 in flight; counted as
    // evidence, the window's later refusals at 14 in flight made a cap of 13, then 11, then 10,
    // and 39 429s in 15 s (seed 1); without, no cap and 24 429s in each run.
    const window = catalogue({ kind: "fixed_window", limit: 50, windowSeconds: 1 });
    for (const seed of [1, 3]) {
      const { rate, run } = await freshRun(window({ retryAfter: "seconds" }), {
        seconds: 15,
        seed,
        ...SLOW_ANSWERS,
      });

      expect(rate.concurrency, `seed ${seed}`).toBe(Number.POSITIVE_INFINITY);
      expect(run.refused.length, `seed ${seed}`).toBeLessThanOrEqual(28);
      expect(acceptedRate(run, 5000, 15_000)).toBeGreaterThanOrEqual(0.95 * 50);
    }
  });
});

describe("RateModel against a cap of 2 in flight, answers of 40 ms", () => {
  it("reads the cap from slow start's first 429 and holds the rate the cap allows from 2 s on", async () => {
    // The cap allows 2 per 41 ms, 48.8 a second. Slow start's first 429 came at 3 in flight,
    // with nothing accepted at 3 before. Taken as a rate, it held the pace at 41.7-43.3 a second
    // from 2 to 8 s in each of these seeds until probes found the cap at 7.1-7.4 s; put on trial
    // as a cap, 48.7 in 11 of 12 (the twelfth accepted one request at 3, an answer on its way
    // back, and its first 429 came at 3 again: read as a rate, as before). The model (rule 13)
    // learns it in startup from a refusal at 4 or fewer in flight.
    const cap = catalogue({ kind: "in_flight", maxInFlight: 2 });
    let atCap = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const { rate, run } = await freshRun(cap({ retryAfter: "seconds" }), { seconds: 8, seed });

      const held = acceptedRate(run, 2000, 8000);
      expect(held, `seed ${seed}`).toBeGreaterThanOrEqual(30);
      if (rate.concurrency === 2 && held >= 0.97 * (2000 / 41)) atCap++;
    }
    expect(atCap).toBeGreaterThanOrEqual(10);
  });
});

describe("RateModel when answers take long", () => {
  it("spends few 429s probing a sliding log at 200 ms a request, where each probe costs a dozen", async () => {
    // A probe above the log's limit is refused for every request in flight when its first 429
    // comes back, 11 or 12 at 50/s, and the log counts them: probes a few seconds apart took 55
    // 429s in 20 s and kept 41 a second (seed 1); waiting until they are 2% of the requests, 28
    // and 46 a second in each run.
    for (const seed of [1, 2]) {
      const { run } = await freshRun(slidingLog(50, 1000, { retryAfter: "seconds" }), {
        seconds: 20,
        seed,
        ...SLOW_ANSWERS,
      });

      expect(run.refused.length, `seed ${seed}`).toBeLessThanOrEqual(32);
      expect(acceptedRate(run, 5000, 20_000)).toBeGreaterThanOrEqual(0.9 * 50);
    }
  });

  it("keeps a token bucket of 50/s to few 429s at 200 ms a request, no Retry-After", async () => {
    // Two seeds whose runs took 329 and 349 429s in 15 s before: cuts judged from 8 answers.
    for (const seed of [2, 6]) {
      const { run } = await bucketOf50(seed, { seconds: 15, latencyMs: 200 });

      expect(run.refused.length).toBeLessThanOrEqual(40);
      expect(acceptedRate(run, 5000, 15_000)).toBeGreaterThanOrEqual(0.95 * 50);
    }
  });
});

describe("RateModel at slow start's exit, answers of 300 ms", () => {
  it("takes no rate from the requests in flight that calls for no cut: a bucket of one refuses some at any pace", async () => {
    // With 300 ms answers about 15 are in flight at the first 429. A bucket of one with stalls
    // refuses half of them while accepting 27-30 a second, more than the pace the 429 left
    // (22-25) but under the edge slow start's last half second gives (40-42); taken as its
    // rate, that held 31-35 a second from 3 s to 15 s in these runs, 40-42 now.
    const bucket = catalogue({ kind: "token_bucket", ratePerSecond: 50, burst: 1 });
    for (const seed of [2, 4, 5, 8, 9]) {
      const { run } = await freshRun(bucket({ retryAfter: "seconds" }), {
        seconds: 15,
        seed,
        latencyMs: 300,
        stallsPerSecond: 1,
        stallMs: 20,
      });

      expect(acceptedRate(run, 3000, 15_000), `seed ${seed}`).toBeGreaterThanOrEqual(38);
    }
  });
});

describe("RateModel at an edge learned from a window used up", () => {
  it("probes above it no sooner than 12 s on, and still probes", async () => {
    // The edge is what the window accepted, measured, not guessed. Probed a second after the
    // plateau was reached, it cost 2 429s at 7.4 s (the window) and 3 at 6.5 s (the log) in each
    // of these runs, a sync of 580 requests being over by 12 s.
    const window = catalogue({ kind: "fixed_window", limit: 50, windowSeconds: 1 });
    const kinds = [
      ["fixed window of 50 a second", () => window({ retryAfter: "seconds" })],
      ["sliding log of 50 a second", () => slidingLog(50, 1000, { retryAfter: "seconds" })],
    ] as const;
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      for (const [name, upstream] of kinds) {
        const { run } = await freshRun(upstream(), { seconds: 30, seed });
        const probes = run.refused.filter((t) => t >= 4000);

        expect(probes[0], `${name}, seed ${seed}`).toBeGreaterThan(12_000);
        // After a window spent, the hold doubles twice (rule 4): 21.0 to 22.5 s in these runs.
        expect(probes[0], `${name}, seed ${seed}`).toBeLessThan(24_000);
        expect(acceptedRate(run, 4000, 30_000)).toBeGreaterThanOrEqual(0.94 * 50);
      }
    }
  });
});

describe("RateModel after a burst spent in slow start", () => {
  it("comes down to a token bucket's rate with few 429s: what was accepted since slow start ended, not the burst", async () => {
    // A bucket of 50/s with a burst of 50, 40 ms a request, small upstream stalls: slow start
    // spends the burst at up to 200 a second. Measured over the last second, what was accepted
    // included the burst (99 a second), and the pace came down in steps (97, 94, 74, 49), each
    // above the rate refusing a few more: 16 to 19 429s in these six runs before, 11 to 13 now.
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const { run } = await bucketOf50(seed, { seconds: 12, stallsPerSecond: 1, stallMs: 10 });

      expect(run.refused.length, `seed ${seed}`).toBeLessThanOrEqual(20);
      expect(acceptedRate(run, 3000, 12_000)).toBeGreaterThanOrEqual(0.95 * 50);
    }
  });

  it("over sockets' timing, comes down to a token bucket's rate: the burst's end is no noise", async () => {
    // Answers and timers late, the event loop busy now and then (SOCKET_JITTER). The pace came
    // down from slow start's exit in steps of a few percent, each refused, and the burst's end was
    // judged noise: startup's estimate came back and refusals of up to 44% never cut again (126
    // 429s in 12 s, seed 2); 10 to 17 in these runs now.
    const bucket = catalogue({ kind: "token_bucket", ratePerSecond: 50, burst: 50 });
    for (const seed of [2, 5, 11]) {
      for (const say of [SAYS[0], SAYS[2]] as Array<[string, Say]>) {
        const { run } = await freshRun(bucket(say[1]), {
          seconds: 12,
          seed,
          socket: SOCKET_JITTER,
        });

        expect(run.refused.length, `seed ${seed}, ${say[0]}`).toBeLessThanOrEqual(20);
        expect(acceptedRate(run, 3000, 12_000)).toBeGreaterThanOrEqual(0.95 * 50);
      }
    }
  });

  it("at 200 ms a request, measures the bucket's rate from the requests in flight when slow start ends", async () => {
    // About 15 requests are in flight at slow start's first 429, their answers all in within a
    // round trip: enough to measure the emptied bucket's rate before any request sent after the
    // 429 is answered. Weighing only those sent after, the pace stayed at 77 a second a round
    // trip longer: 13 429s in the 2 s from the first in each of these runs, 8 or 9 now.
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const { run } = await bucketOf50(seed, { seconds: 12, ...SLOW_ANSWERS });
      const first = run.refused[0] as number;

      expect(
        run.refused.filter((t) => t < first + 2000).length,
        `seed ${seed}`,
      ).toBeLessThanOrEqual(13);
      expect(acceptedRate(run, 5000, 12_000)).toBeGreaterThanOrEqual(0.95 * 50);
    }
  });
});

describe("RateModel at the end of a window longer than Retry-After's second", () => {
  it("a fixed window of 500 per 10 s: the next one is used from its start, not from Retry-After's whole second", async () => {
    // rate-limiter-flexible's window starts at its first request (about 0 ms here) and ends 10 s
    // later; slow start spends it by about 2.7 s, whose 429s say "Retry-After: 8". Waiting out
    // the header, the first answer accepted after came at 10.72 s and the next at 10.76 s (seed 1);
    // probed 10 s after the first answer, they come at 10.08 and 10.12 s in each seed.
    const window = catalogue({ kind: "fixed_window", limit: 500, windowSeconds: 10 });
    for (const seed of [1, 2, 3]) {
      const { run } = await freshRun(window({ retryAfter: "seconds" }), { seconds: 12, seed });
      const firstRefused = run.refused[0] as number;
      const [probe, next] = run.accepted.filter((t) => t > firstRefused) as [number, number];

      expect(probe, `seed ${seed}`).toBeLessThanOrEqual(10_100);
      // The block ends with the probe: the others follow it, not the header's end.
      expect(next, `seed ${seed}`).toBeLessThanOrEqual(10_200);
      // Up to then: the 16 in flight when the window was spent, and no probe refused.
      const refusedBefore = run.refused.filter((t) => t < probe).length;
      expect(refusedBefore, `seed ${seed}`).toBeLessThanOrEqual(16);
    }
  });

  it("a sliding log of 500 per 10 s that counts refusals: a wrong guess costs its 429 and nothing else", async () => {
    // The log's first entry leaves it 10 s after the first request, so the guess goes then and is
    // refused (the 16 refused in flight are still in it). Taken as a refusal of the pace, it made
    // the next ones look like a limit crossed, and the pace was cut to 8 a second for 17 s: 640
    // accepted in 30 s (seed 1), against 1,060 without the guess; 1,089 to 1,092 now.
    for (const seed of [1, 2, 3]) {
      const { run } = await freshRun(slidingLog(500, 10_000, { retryAfter: "seconds" }), {
        seconds: 30,
        seed,
      });

      // The model: 803 and 33 429s in each (its block's tail, refusals the log still counts, measured).
      expect(run.accepted.length, `seed ${seed}`).toBeGreaterThanOrEqual(790);
      expect(run.refused.length, `seed ${seed}`).toBeLessThanOrEqual(40);
    }
  });
});

interface SlowerKind {
  name: string;
  upstream: () => Upstream;
  model?: Partial<ModelOptions>;
  /** In 30 s, in each seed: accepted at least, 429s at most. */
  accepted: number;
  refused: number;
}

const SLOWER_KINDS: SlowerKind[] = [
  {
    // A cut on trial regrew to 12-17 a second, and its refusals were taken for noise: 217 429s in
    // 30 s (seed 1), 272 accepted (seeds 2, 3). The trial's ceiling, or taking no edge from
    // requests sent no faster than they were accepted, each prevents it.
    name: "a fixed window of 10 a second: few 429s, and most of its rate",
    upstream: () =>
      catalogue({ kind: "fixed_window", limit: 10, windowSeconds: 1 })({ retryAfter: "seconds" }),
    accepted: 280,
    refused: 20,
  },
  {
    // Slow start's exit was put on trial; 2 refused of 13 after the cut read as noise, and the
    // pace went back to the exit's with no edge at all: 179 to 241 429s in 30 s.
    name: "a token bucket of 20/s, burst 2: slow start's exit is no trial of noise",
    upstream: () =>
      catalogue({ kind: "token_bucket", ratePerSecond: 20, burst: 2 })({ retryAfter: "seconds" }),
    accepted: 540,
    refused: 20,
  },
  {
    // The exit's trial read as noise, the pace went back to 28 a second with no edge, and the
    // 429s hid among the answers counted since: 95 in 30 s, 129 to 133 accepted.
    name: "a fixed window of 5 a second at 200 ms a request: slow start's exit is no trial of noise",
    upstream: () =>
      catalogue({ kind: "fixed_window", limit: 5, windowSeconds: 1 })({ retryAfter: "seconds" }),
    model: { latencyMs: 200 },
    accepted: 140,
    refused: 25,
  },
  {
    // Reverted to slow start's pace, the log stayed full and the edge was measured at 2 a second:
    // 56 or 57 accepted in 30 s; with the exit no trial but no ceiling, 73.
    name: "a sliding log of 5 a second that counts refusals: no trial at slow start's exit, no regrowth above a trial's ceiling",
    upstream: () => slidingLog(5, 1000, { retryAfter: "seconds" }),
    accepted: 100,
    refused: 20,
  },
  {
    // A block measured the log's rate from what it accepted over a shorter span than a second,
    // extrapolated: 8.5 a second at the first, 3 at the next, held 16 s before probing above it
    // (92 accepted in 30 s; 58 at 12d675e).
    name: "a sliding log of 5 a second at 200 ms a request: a block measures what a whole second accepted",
    upstream: () => slidingLog(5, 1000, { retryAfter: "seconds" }),
    model: { latencyMs: 200 },
    accepted: 120,
    refused: 20,
  },
  {
    // Slow start's exit cuts the pace to 3.9 a second (one answer in its first quarter second).
    // With the exit no trial, a saturated episode of requests sent at that pace made it the edge:
    // 149 to 153 accepted in 30 s, 207 to 216 now (210 to 216 at 702a98e, where the exit's trial
    // was reverted as noise and its edge of 16 a second stood).
    name: "a token bucket of one at 10/s: answers sent no faster than they were accepted measure no rate",
    upstream: () =>
      catalogue({ kind: "token_bucket", ratePerSecond: 10, burst: 1 })({ retryAfter: "seconds" }),
    model: { stallsPerSecond: 1, stallMs: 20 },
    accepted: 200,
    refused: 10,
  },
];

describe("RateModel against limiters slower than 50 a second", () => {
  // The kinds above run at 50 a second; users meet upstreams that allow 5, 10 or 20. Against
  // these, refusals were taken for noise from a trial that proved nothing, and the pace then
  // climbed with a 429 for every second request: each kind's comment says what it took before.
  for (const kind of SLOWER_KINDS) {
    it(kind.name, async () => {
      for (const seed of [1, 2, 3]) {
        const { run } = await freshRun(kind.upstream(), { seconds: 30, seed, ...kind.model });

        expect(run.accepted.length, `seed ${seed}`).toBeGreaterThanOrEqual(kind.accepted);
        expect(run.refused.length, `seed ${seed}`).toBeLessThanOrEqual(kind.refused);
      }
    });
  }
});

describe("RateModel against a fixed window met at any phase", () => {
  // The catalogue's fixed window opens at the client's first request, so every run above meets it
  // at one phase. A server already running, or a limit shared with other clients, opens it earlier
  // (`opensAt: "start"`): the client's first second spans two windows. Before, at some phases, a
  // cut on trial was judged by the refusals of the window spent before it (sent after the cut,
  // refused until that window ended), read as noise, and the rest of every window was refused:
  // 50 to 112 429s in 30 s at 40 ms (phases 500-900), 55 to 144 at 120 ms; at 5 a second the edge
  // measured was 5, paced at 4.9, and the starts allowed within a second were 4: 124 accepted in
  // 30 s of 150.
  const PHASES = [0, 100, 200, 300, 400, 500, 600, 700, 800, 900];
  const cases = [
    { limit: 10, latencyMs: 40 },
    { limit: 10, latencyMs: 120 },
    { limit: 5, latencyMs: 40 },
    // A saturated episode's one accepted answer, 0.76 s after it began, made an edge of 1.3 a
    // second at phase 700: 95 accepted in 30 s.
    { limit: 5, latencyMs: 200 },
  ];
  for (const { limit, latencyMs } of cases) {
    it(`a window of ${limit} a second at ${latencyMs} ms a request: few 429s and nearly its rate at every phase`, async () => {
      for (const phase of PHASES) {
        vi.useRealTimers();
        startFakeClock();
        const upstream = createLimiter({
          kind: "fixed_window",
          limit,
          windowSeconds: 1,
          opensAt: "start",
        }) as Upstream;
        vi.advanceTimersByTime(phase);
        const run = await runModel(new RateModel(), upstream, {
          seconds: 30,
          latencyMs,
          seed: 1,
        });

        // 6 to 21 in these runs.
        expect(run.refused.length, `phase ${phase} ms`).toBeLessThanOrEqual(24);
        expect(run.accepted.length, `phase ${phase} ms`).toBeGreaterThanOrEqual(0.95 * limit * 30);
      }
    });
  }
});
