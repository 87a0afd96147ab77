/**
 * The rate controller (`AdaptiveRate`) against the simulators' limiter catalogue on the fake
 * clock of `test/http/upstreamModel.ts` (16 in flight, endless work, nothing configured): every
 * kind at each rate, latency and seed, in seconds of simulated time that take milliseconds here.
 * At 50 a second, as the bench's limiter matrix: seconds to the 578th accepted answer and the
 * 429s before it; slower, what was accepted and refused in 30 s. Fixed windows of a second are
 * opened before the run (`opensAt: "start"`) at a phase of (seed x 173) mod 1000 ms.
 *
 *   npm run bench:rate-model                       (writes .build/RATE_MODEL.md)
 *   RATES=10 LATENCIES=40 SEEDS=3 KINDS=window-1s npm run bench:rate-model
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { it, vi } from "vitest";
import { AdaptiveRate } from "../../lib/http/AdaptiveRate";
import { createLimiter, type LimiterSettings } from "../../lib/simulators/limiters";
import {
  type ModelOptions,
  runModel,
  slidingLog,
  startFakeClock,
  type Upstream,
} from "../../test/http/upstreamModel";

const list = (name: string, fallback: string) =>
  (process.env[name] ?? fallback).split(",").filter(Boolean);
const RATES = list("RATES", "5,10,20,30,50").map(Number);
const LATENCIES = list("LATENCIES", "40,120,200").map(Number);
const SEEDS = Number(process.env.SEEDS ?? 10);
const ONLY = list("KINDS", "");
/** At 50 a second: the bench's minimum for blackline-10k. */
const REQUESTS = 578;
const SECONDS = 30;

interface Kind {
  name: string;
  upstream: (rate: number, seed: number) => Upstream;
  model?: Partial<ModelOptions>;
}

const limiter = (settings: LimiterSettings) => createLimiter(settings) as Upstream;

const KINDS: Kind[] = [
  {
    name: "bucket, burst 1",
    upstream: (r) => limiter({ kind: "token_bucket", ratePerSecond: r, burst: 1 }),
    model: { stallsPerSecond: 1, stallMs: 20 },
  },
  {
    name: "bucket, burst a tenth",
    upstream: (r) =>
      limiter({ kind: "token_bucket", ratePerSecond: r, burst: Math.max(1, Math.round(r / 10)) }),
  },
  {
    name: "bucket, burst the rate",
    upstream: (r) => limiter({ kind: "token_bucket", ratePerSecond: r, burst: r }),
  },
  {
    name: "bucket, burst the rate, no Retry-After",
    upstream: (r) =>
      limiter({ kind: "token_bucket", ratePerSecond: r, burst: r, retryAfter: "none" }),
    model: { stallsPerSecond: 1, stallMs: 10 },
  },
  {
    name: "fixed window of 1 s, any phase",
    upstream: (r, seed) => {
      const window = limiter({
        kind: "fixed_window",
        limit: r,
        windowSeconds: 1,
        opensAt: "start",
      });
      vi.advanceTimersByTime((seed * 173) % 1000);
      return window;
    },
  },
  {
    name: "fixed window of 10 s",
    upstream: (r) => limiter({ kind: "fixed_window", limit: 10 * r, windowSeconds: 10 }),
  },
  {
    name: "fixed window of 60 s",
    upstream: (r) => limiter({ kind: "fixed_window", limit: 60 * r, windowSeconds: 60 }),
  },
  { name: "sliding log of 1 s", upstream: (r) => slidingLog(r, 1000, { retryAfter: "seconds" }) },
  {
    name: "sliding log of 10 s",
    upstream: (r) => slidingLog(10 * r, 10_000, { retryAfter: "seconds" }),
  },
];

const spread = (values: number[], digits: number) => {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const f = (v: number) => v.toFixed(digits);
  return `${f(mean)} (${f(Math.min(...values))}-${f(Math.max(...values))})`;
};

it("rate model matrix", async () => {
  const lines = [
    `# Rate model (${new Date().toISOString()}): ${SEEDS} seeds, mean (min-max)`,
    "",
    "| limiter | rate /s | latency ms | accepted in 30 s, or s to 578 at 50/s | 429s |",
    "| --- | --- | --- | --- | --- |",
  ];
  for (const kind of KINDS.filter((k) => ONLY.length === 0 || ONLY.includes(k.name))) {
    for (const r of RATES) {
      for (const latencyMs of LATENCIES) {
        const outcome: number[] = [];
        const refused: number[] = [];
        for (let seed = 1; seed <= SEEDS; seed++) {
          vi.useRealTimers();
          startFakeClock();
          const upstream = kind.upstream(r, seed);
          const seconds = r === 50 ? 60 : SECONDS;
          const run = await runModel(new AdaptiveRate(), upstream, {
            seconds,
            latencyMs,
            seed,
            ...kind.model,
          });
          const end = r === 50 ? (run.accepted[REQUESTS - 1] ?? Number.NaN) : SECONDS * 1000;
          outcome.push(r === 50 ? end / 1000 : run.accepted.filter((t) => t <= end).length);
          refused.push(run.refused.filter((t) => t <= end).length);
        }
        lines.push(
          `| ${kind.name} | ${r} | ${latencyMs} | ${spread(outcome, r === 50 ? 2 : 0)} | ${spread(refused, 1)} |`,
        );
      }
    }
  }
  vi.useRealTimers();
  mkdirSync(".build", { recursive: true });
  writeFileSync(".build/RATE_MODEL.md", `${lines.join("\n")}\n`);
  console.log(lines.join("\n"));
});
