/**
 * The rate controller against the simulators' limiter catalogue on the fake clock of
 * `test/http/upstreamModel.ts` (16 in flight, endless work, nothing configured), in seconds of
 * simulated time that take milliseconds here.
 *
 * The gate table: each of 15 kinds at 50 requests/s (40 ms a request; one kind at 200 ms), 10
 * seeds, until the 578th accepted answer (the bench's minimum for blackline-10k). Per kind: wall
 * (s to that answer) over the floor (`bench/floors.ts`: the earliest a client knowing the limiter
 * could have it, 16 at a time, no chain of pages; a window met at a phase p closes p sooner), and
 * requests sent by then (429s included) over 578; for ours, the anchors a user would pick instead
 * (`anchors.ts`: the AWS SDK's adaptive retry mode, AIMD, a client told the limiter) and the
 * committed baseline (`baseline.json`, "before"). Fixed windows "any phase" are opened before the
 * run at (seed x 173) mod 1000 ms. The "-sockets" kinds spread the client's times as loopback
 * sockets do (`SOCKET_JITTER`), which the baseline predates.
 *
 *   npm run bench:rate-model                     (writes .build/RATE_MODEL.md and .json)
 *   SEEDS=1 KINDS=bucket-1,window-1s CLIENTS=ours npm run bench:rate-model
 *   SWEEP=1 RATES=10 LATENCIES=40 npm run bench:rate-model   (the older sweep: rates x latencies)
 *   BASELINE=1 npm run bench:rate-model          (rewrites baseline.json from ours)
 *   SOCKETS=1 npm run bench:rate-model           (every kind with the client's times as on sockets)
 */
import { execSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { it, vi } from "vitest";
import { RateModel } from "../../lib/rate";
import { createLimiter, type LimiterSettings } from "../../lib/simulators/limiters";
import { parseLimiterSettings } from "../../lib/simulators/limiters/settings";
import {
  type GatedClient,
  type ModelOptions,
  type PacedController,
  runModel,
  SOCKET_JITTER,
  slidingLog,
  startFakeClock,
  type Upstream,
} from "../../test/http/upstreamModel";
import { limiterFloorSeconds } from "../floors";
import { aimd, awsAdaptive, told } from "./anchors";

const list = (name: string, fallback: string) =>
  (process.env[name] ?? fallback).split(",").filter(Boolean);
const SEEDS = Number(process.env.SEEDS ?? 10);
const ONLY = list("KINDS", "");
const CONCURRENCY = 16;
/** At 50 a second: the bench's minimum for blackline-10k. */
const REQUESTS = 578;
const BASELINE_FILE = "bench/rateModel/baseline.json";

interface Kind {
  name: string;
  limiter: LimiterSettings;
  latencyMs?: number;
  /** A fixed window opened before the run, met at a phase of the seed's. */
  anyPhase?: boolean;
  /** The model's own limiter instead of the catalogue's. */
  upstream?: () => Upstream;
  model?: Partial<ModelOptions>;
}

const bucket = (burst: number) => ({ kind: "token_bucket", ratePerSecond: 50, burst }) as const;
const window = (seconds: number) =>
  ({ kind: "fixed_window", limit: 50 * seconds, windowSeconds: seconds }) as const;

const KINDS: Kind[] = [
  { name: "bucket-1", limiter: bucket(1), model: { stallsPerSecond: 1, stallMs: 20 } },
  { name: "bucket-5", limiter: bucket(5) },
  { name: "bucket-50", limiter: bucket(50) },
  {
    name: "bucket-50-no-retry-after",
    limiter: { ...bucket(50), retryAfter: "none" },
    model: { stallsPerSecond: 1, stallMs: 10 },
  },
  { name: "bucket-50-retry-date", limiter: { ...bucket(50), retryAfter: "date" } },
  {
    name: "bucket-50-ratelimit-headers",
    limiter: { ...bucket(50), retryAfter: "none", headers: "ratelimit" },
  },
  { name: "window-1s", limiter: window(1) },
  { name: "window-1s-any-phase", limiter: { ...window(1), opensAt: "start" }, anyPhase: true },
  { name: "window-10s", limiter: window(10) },
  { name: "window-60s", limiter: window(60) },
  {
    name: "sliding-log",
    limiter: { kind: "sliding_log", limit: 50, windowSeconds: 1 },
    upstream: () => slidingLog(50, 1000, { retryAfter: "seconds" }),
  },
  { name: "in-flight-2", limiter: { kind: "in_flight", maxInFlight: 2 } },
  { name: "bucket-50-200ms", limiter: { ...bucket(50), retryAfter: "none" }, latencyMs: 200 },
  // The client's times spread as over loopback sockets (`SOCKET_JITTER`): behind a bucket of 50
  // with burst 50, the socket matrix drew 33-70 429s in some runs and 7-17 in others.
  { name: "bucket-50-sockets", limiter: bucket(50), model: { socket: SOCKET_JITTER } },
  {
    name: "bucket-50-no-retry-after-sockets",
    limiter: { ...bucket(50), retryAfter: "none" },
    model: { socket: SOCKET_JITTER },
  },
];

type Client = PacedController<unknown> | GatedClient<unknown>;
const CLIENTS: Record<string, (kind: Kind) => Client> = {
  ours: () => new RateModel() as unknown as Client,
  aws: () => awsAdaptive() as Client,
  aimd: () => aimd() as Client,
  told: (kind) => told(parseLimiterSettings(kind.limiter)) as Client,
};
const CLIENT_NAMES = list("CLIENTS", "ours,aws,aimd,told");

interface Spread {
  mean: number;
  min: number;
  max: number;
}
type Cell = { wallOverFloor: Spread; requestsOverMinimum: Spread };
type Row = Record<string, Cell>;
interface Baseline {
  commit: string;
  date: string;
  seeds: number;
  kinds: Record<string, Cell>;
}

const spreadOf = (values: number[]): Spread => ({
  mean: values.reduce((a, b) => a + b, 0) / values.length,
  min: Math.min(...values),
  max: Math.max(...values),
});

/** The phase (ms) at which a window opened before the run is met. */
const phaseOf = (seed: number) => (seed * 173) % 1000;

function floorSeconds(kind: Kind, seed: number): number {
  const limiter = parseLimiterSettings(kind.limiter);
  const floor = limiterFloorSeconds({
    limiter,
    requests: REQUESTS,
    latencyMs: kind.latencyMs ?? 40,
    concurrency: CONCURRENCY,
    chainRoundTrips: 0,
  });
  if (!kind.anyPhase || limiter.kind !== "fixed_window" || REQUESTS <= limiter.limit) return floor;
  return floor - phaseOf(seed) / 1000;
}

async function runKind(kind: Kind, client: string): Promise<Cell> {
  const walls: number[] = [];
  const requests: number[] = [];
  const random = vi.spyOn(Math, "random");
  for (let seed = 1; seed <= SEEDS; seed++) {
    vi.useRealTimers();
    startFakeClock();
    let state = seed * 7919;
    // The AWS SDK's backoff draws from Math.random: seeded, so a run repeats.
    random.mockImplementation(() => {
      state = (state * 48271) % 2147483647;
      return state / 2147483647;
    });
    const upstream = kind.upstream?.() ?? (createLimiter(kind.limiter) as Upstream);
    if (kind.anyPhase) vi.advanceTimersByTime(phaseOf(seed));
    const run = await runModel((CLIENTS[client] as (k: Kind) => Client)(kind), upstream, {
      seconds: 300,
      stopAfterAccepted: REQUESTS,
      latencyMs: kind.latencyMs ?? 40,
      seed,
      concurrency: CONCURRENCY,
      ...(process.env.SOCKETS ? { socket: SOCKET_JITTER } : {}),
      ...kind.model,
    });
    const end = run.accepted[REQUESTS - 1] ?? Number.POSITIVE_INFINITY;
    walls.push(end / 1000 / floorSeconds(kind, seed));
    const sent =
      run.accepted.filter((t) => t <= end).length + run.refused.filter((t) => t <= end).length;
    requests.push(sent / REQUESTS);
  }
  random.mockRestore();
  return { wallOverFloor: spreadOf(walls), requestsOverMinimum: spreadOf(requests) };
}

const f2 = (s: Spread | undefined) =>
  s === undefined
    ? ""
    : Number.isFinite(s.mean)
      ? `${s.mean.toFixed(3)} (${s.max.toFixed(3)})`
      : "> 300 s";

function table(rows: Map<string, Row>, baseline: Baseline | undefined): string[] {
  const columns = ["before", ...CLIENT_NAMES];
  const cell = (kind: string, row: Row, column: string) =>
    column === "before" ? baseline?.kinds[kind] : row[column];
  const lines = [
    `| kind | ${columns.map((c) => `${c} wall/floor`).join(" | ")} | ${columns.map((c) => `${c} requests`).join(" | ")} | gate |`,
    `|${" --- |".repeat(2 * columns.length + 2)}`,
  ];
  for (const [kind, row] of rows) {
    const walls = columns.map((c) => f2(cell(kind, row, c)?.wallOverFloor));
    const reqs = columns.map((c) => f2(cell(kind, row, c)?.requestsOverMinimum));
    lines.push(
      `| ${kind} | ${walls.join(" | ")} | ${reqs.join(" | ")} | ${gate(kind, row, baseline)} |`,
    );
  }
  return lines;
}

/**
 * Ours against the baseline: mean wall/floor within 0.03 of it, mean requests at most 1.03 (a
 * kind the baseline lacks: requests only).
 */
function gate(kind: string, row: Row, baseline: Baseline | undefined): string {
  const ours = row.ours;
  const before = baseline?.kinds[kind];
  if (!ours) return "";
  const wallOk = !before || ours.wallOverFloor.mean <= before.wallOverFloor.mean + 0.03;
  const requestsOk = ours.requestsOverMinimum.mean <= 1.03;
  return wallOk && requestsOk
    ? "met"
    : `missed (${wallOk ? "" : "wall"}${requestsOk ? "" : " requests"})`;
}

it("rate model matrix", async () => {
  const rows = new Map<string, Row>();
  for (const kind of KINDS.filter((k) => ONLY.length === 0 || ONLY.includes(k.name))) {
    const row: Row = {};
    for (const client of CLIENT_NAMES) row[client] = await runKind(kind, client);
    rows.set(kind.name, row);
  }
  vi.useRealTimers();
  let baseline: Baseline | undefined;
  try {
    baseline = JSON.parse(readFileSync(BASELINE_FILE, "utf8")) as Baseline;
  } catch {
    baseline = undefined;
  }
  const commit = execSync("git rev-parse --short HEAD").toString().trim();
  const lines = [
    `# Rate model at ${commit} (${new Date().toISOString()}): ${SEEDS} seeds, 50 requests/s, 578 accepted`,
    "",
    `Each cell: mean (worst) over the seeds. Before: baseline.json (${baseline?.commit ?? "none"}).`,
    "",
    ...table(rows, baseline),
  ];
  if (process.env.SWEEP) lines.push("", ...(await sweep()));
  mkdirSync(".build", { recursive: true });
  writeFileSync(".build/RATE_MODEL.md", `${lines.join("\n")}\n`);
  writeFileSync(".build/RATE_MODEL.json", `${JSON.stringify(Object.fromEntries(rows), null, 2)}\n`);
  if (process.env.BASELINE) {
    const kinds = Object.fromEntries([...rows].map(([k, row]) => [k, row.ours as Cell]));
    const next: Baseline = { commit, date: new Date().toISOString(), seeds: SEEDS, kinds };
    writeFileSync(BASELINE_FILE, `${JSON.stringify(next, null, 2)}\n`);
  }
  console.log(lines.join("\n"));
});

/**
 * The older sweep (ours only): the kinds at each rate and latency; at 50 a second, seconds to the
 * 578th accepted answer and the 429s before it; slower, what was accepted and refused in 30 s.
 */
async function sweep(): Promise<string[]> {
  const RATES = list("RATES", "5,10,20,30,50").map(Number);
  const LATENCIES = list("LATENCIES", "40,120,200").map(Number);
  const SECONDS = 30;
  const kinds: Array<{
    name: string;
    upstream: (r: number, seed: number) => Upstream;
    model?: Partial<ModelOptions>;
  }> = [
    {
      name: "bucket, burst 1",
      upstream: (r) =>
        createLimiter({ kind: "token_bucket", ratePerSecond: r, burst: 1 }) as Upstream,
      model: { stallsPerSecond: 1, stallMs: 20 },
    },
    {
      name: "fixed window of 1 s, any phase",
      upstream: (r, seed) => {
        const w = createLimiter({
          kind: "fixed_window",
          limit: r,
          windowSeconds: 1,
          opensAt: "start",
        });
        vi.advanceTimersByTime(phaseOf(seed));
        return w as Upstream;
      },
    },
    { name: "sliding log of 1 s", upstream: (r) => slidingLog(r, 1000, { retryAfter: "seconds" }) },
  ];
  const lines = [
    "| limiter | rate /s | latency ms | accepted in 30 s, or s to 578 at 50/s | 429s |",
    "| --- | --- | --- | --- | --- |",
  ];
  const text = (values: number[], digits: number) => {
    const s = spreadOf(values);
    return `${s.mean.toFixed(digits)} (${s.min.toFixed(digits)}-${s.max.toFixed(digits)})`;
  };
  for (const kind of kinds) {
    for (const r of RATES) {
      for (const latencyMs of LATENCIES) {
        const outcome: number[] = [];
        const refused: number[] = [];
        for (let seed = 1; seed <= SEEDS; seed++) {
          vi.useRealTimers();
          startFakeClock();
          const upstream = kind.upstream(r, seed);
          const run = await runModel(CLIENTS.ours?.({} as Kind) as Client, upstream, {
            seconds: r === 50 ? 60 : SECONDS,
            latencyMs,
            seed,
            ...kind.model,
          });
          const end = r === 50 ? (run.accepted[REQUESTS - 1] ?? Number.NaN) : SECONDS * 1000;
          outcome.push(r === 50 ? end / 1000 : run.accepted.filter((t) => t <= end).length);
          refused.push(run.refused.filter((t) => t <= end).length);
        }
        lines.push(
          `| ${kind.name} | ${r} | ${latencyMs} | ${text(outcome, r === 50 ? 2 : 0)} | ${text(refused, 1)} |`,
        );
      }
    }
  }
  vi.useRealTimers();
  return lines;
}
