/**
 * `npm run bench -- --cloud-rate [--only bucket-counter,window-model] [--runs 3]`: the rate the
 * cloud's workers share (docs/rate-control.md, "The cloud runtime"), through the packaged stack on
 * moto_server with the harness's workers (up to 10 invocations at once, warm containers), for
 * blackline-10k's tenant behind a token bucket and a fixed window of 10 requests a second.
 * Each limiter is run with the shared rate model the worker runs (lib/cloud/aws/sharedRate.ts),
 * with the same model told the limiter's rate, and with the per-second counter it replaced
 * (bench/cloudRate/perSecondCounter.ts, bundled into the worker in its place), each on a stack of
 * its own, in the same process; and, for what the model does at this rate without sharing, one
 * command-line sync (one process, its default concurrency) behind the same limiter. A table of
 * every row at the end. The store's writes are the DynamoDB writes on `rate#` items, counted at
 * the harness's proxy. Measures; asserts nothing.
 */
import { loadavg } from "node:os";
import { join } from "node:path";
import { build, type Plugin } from "esbuild";
import yazl from "yazl";
import type { LimiterSettings } from "../lib/simulators/limiters";
import type { Stack } from "../test/aws/harness";
import { type BenchPaths, runCliSync, type SyncRun } from "./cliSync";
import { type CloudRun, runCloudSync } from "./cloudSync";
import { limiterFloorSeconds } from "./floors";
import { BLACKLINE_10K, type Scenario } from "./scenarios";

const LATENCY_MS = 40;
/** Requests the workers can have in flight: 10 invocations, a batch of 10 jobs each. */
const WORKER_CONCURRENCY = 100;
/** The limiters' rate, requests a second: what the told anchor is configured with. */
const RATE = 10;
const LIMITERS: { name: string; text: string; limiter: LimiterSettings }[] = [
  {
    name: "bucket",
    text: `token bucket ${RATE}/s, burst 5`,
    limiter: { kind: "token_bucket", ratePerSecond: RATE, burst: 5 },
  },
  {
    name: "window",
    text: `fixed window of ${RATE} per 1 s`,
    limiter: { kind: "fixed_window", limit: RATE, windowSeconds: 1 },
  },
];
/**
 * The anchors beside the model: the per-second counter it replaced, the model told the limiter's
 * rate (`CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND`), what a user who knows it would set, and the
 * model in one process (the command line), which shares nothing.
 */
const CONTROLLERS = {
  counter: "per-second counter (before)",
  told: `shared model told ${RATE}/s`,
  model: "shared rate model",
  process: "rate model, one process (CLI)",
} as const;
type Controller = keyof typeof CONTROLLERS;

export interface CloudRateRow {
  /** The round (`--runs`) it was measured in, from 1. */
  run?: number;
  limiter: string;
  controller: string;
  ok: boolean;
  /** `cloud sync` to the end of finalize, and the upstream's first request to its last answer. */
  syncSeconds: number;
  upstreamSeconds: number;
  /** The cloud's own time, outside the upstream's span: sync start to its first request, its last answer to the end. */
  outsideSeconds: number;
  floorSeconds: number;
  wallPerFloor: number;
  /**
   * Wall over the floor plus the cloud's own time of the same run (`outsideSeconds`: the sync
   * started, queued and run up to its first request, then the last job committed and finalize),
   * which no rate controller can shorten: what the controller made of the time it had.
   */
  wallPerCloudFloor: number;
  upstreamPerFloor: number;
  /** What the upstream received (each worker container's token request included) and refused. */
  requests: number;
  refused: number;
  /** The minimum, plus one token request. */
  minimum: number;
  /** Token requests (the minimum counts one): the workers share a token, logging in at once at first. */
  tokenRequests: number;
  requestsPerMinimum: number;
  /** DynamoDB writes on the rate's items (conditional ones refused included), a request. */
  rateWrites: number;
  writesPerRequest: number;
  workerInvocations: number;
  cpuSeconds: { emulator: number; harness: number };
  /** The machine's load average (1 minute) when the run ended. */
  load: number;
  error?: string;
  /**
   * The shared model's moves the workers logged (`learned rate moved`: a cut, an edge learned, a
   * block begun or over), seconds from the first, in order: how a run's time went.
   */
  rateMoves?: RateMove[];
}

interface RateMove {
  s: number;
  moved: string;
  pace?: number;
  edge?: number;
  refusals?: number;
}

/**
 * The shared model's moves in the worker's log lines (Powertools' JSON, one a line; the fold's
 * carry `refusals`, the worker's own limiter's do not), timed from the first.
 */
function rateMoves(stack: Stack): RateMove[] {
  const moves: { at: number; move: RateMove }[] = [];
  for (const { line } of stack.logs("syncWorker")) {
    if (!line.includes('"learned rate moved"')) continue;
    let entry: RateMove & { timestamp?: string };
    try {
      entry = JSON.parse(line) as RateMove & { timestamp?: string };
    } catch {
      continue;
    }
    const at = Date.parse(entry.timestamp ?? "");
    if (entry.refusals === undefined || Number.isNaN(at)) continue;
    const { moved, pace, edge, refusals } = entry;
    moves.push({ at, move: { s: 0, moved, pace, edge, refusals } });
  }
  moves.sort((a, b) => a.at - b.at);
  const first = moves[0]?.at ?? 0;
  return moves.map(({ at, move }) => ({ ...move, s: Math.round((at - first) / 100) / 10 }));
}

/**
 * `only`: `<limiter>-<controller>` names (`bucket-counter`); all eight when absent. `runs`: rounds
 * of every row, one row after another within a round, so a drift of the machine's load falls on
 * each row alike; one run of a row varies by 0.05 of wall / floor or more.
 */
export async function runCloudRate(
  paths: BenchPaths,
  only?: string[],
  runs = 1,
): Promise<CloudRateRow[]> {
  const rows: CloudRateRow[] = [];
  const counterWorker = await counterBundle(paths.root);
  for (let round = 1; round <= runs; round++) {
    await runRound(paths, only, counterWorker, rows, { round, runs });
  }
  process.stdout.write(table(rows));
  return rows;
}

async function runRound(
  paths: BenchPaths,
  only: string[] | undefined,
  counterWorker: Buffer,
  rows: CloudRateRow[],
  { round, runs }: { round: number; runs: number },
): Promise<void> {
  const tag = runs > 1 ? ` (run ${round} of ${runs})` : "";
  for (const { name, text, limiter } of LIMITERS) {
    for (const controller of Object.keys(CONTROLLERS) as Controller[]) {
      if (only && !only.includes(`${name}-${controller}`)) continue;
      process.stderr.write(`bench: cloud rate, ${text}, ${CONTROLLERS[controller]}${tag}\n`);
      const scenario: Scenario = {
        name: `cloud-rate-${name}-${controller}`,
        quick: false,
        runtime: "cloud",
        simulator: {
          connector: "blackline",
          // The limiter matrix's tenant (578 requests), a minute at 10/s: the cloud's own 2-3 s
          // (fan-out, finalize) is a few percent of it, not the sixth of a 3,000-user run.
          size: BLACKLINE_10K,
          upstream: { latencyMs: LATENCY_MS, limiter, maxPageSize: 137 },
        },
        tenantText: "as blackline-10k, through the cloud runtime, 10 workers",
        upstreamText: `${LATENCY_MS} ms, page cap 137, ${text}`,
      };
      let deployed: Stack | undefined;
      const run =
        controller === "process"
          ? await runCliSync({ ...scenario, runtime: "cli" }, paths, {
              concurrencyOne: false,
              tag: scenario.name,
            })
          : await runCloudSync(scenario, paths, {
              async deployed(stack) {
                deployed = stack;
                if (controller === "counter")
                  await stack.updateFunctionCode("syncWorker", counterWorker);
                // Each move of the shared model, logged at debug (`learned rate moved`).
                else await stack.updateEnvironment("syncWorker", { POWERTOOLS_LOG_LEVEL: "DEBUG" });
              },
              ...(controller === "told"
                ? { instanceEnv: { CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: String(RATE) } }
                : {}),
            });
      const moves = deployed ? rateMoves(deployed) : [];
      rows.push({
        ...row(text, CONTROLLERS[controller], limiter, run),
        run: round,
        ...(moves.length > 0 ? { rateMoves: moves } : {}),
      });
      process.stdout.write(`${JSON.stringify(rows.at(-1))}\n`);
    }
  }
}

/**
 * Every row's figures as a Markdown table (the JSON lines above hold the rest): with several runs
 * of a row, their mean, and wall / floor's lowest and highest.
 */
function table(runs: CloudRateRow[]): string {
  const head = [
    "limiter",
    "controller",
    "wall / floor",
    "wall / (floor + own time)",
    "upstream span / floor",
    "own time, s",
    "requests / min (429s, most in a run)",
    "token requests",
    "store writes / request",
    "floor, s",
    "load",
  ];
  const groups = new Map<string, CloudRateRow[]>();
  for (const run of runs) {
    const key = `${run.limiter} | ${run.controller}`;
    groups.set(key, [...(groups.get(key) ?? []), run]);
  }
  const lines = [...groups].map(([key, all]) => {
    // A failed run's figures are partial: the means are the runs that finished exact.
    const rows = all.filter((r) => r.ok);
    const failed = [...new Set(all.filter((r) => !r.ok).map((r) => r.error ?? "?"))];
    const failure =
      failed.length > 0
        ? ` (failed ${all.length - rows.length} of ${all.length}: ${failed.join("; ")})`
        : "";
    if (rows.length === 0) return `${key}${failure}`;
    const mean = (pick: (r: CloudRateRow) => number) =>
      rows.reduce((sum, r) => sum + pick(r), 0) / rows.length;
    const walls = rows.map((r) => r.wallPerFloor);
    return [
      key + failure,
      mean((r) => r.wallPerFloor).toFixed(2) +
        (rows.length > 1
          ? ` (${Math.min(...walls).toFixed(2)}-${Math.max(...walls).toFixed(2)}, ${rows.length} runs)`
          : ""),
      mean((r) => r.wallPerCloudFloor).toFixed(2),
      mean((r) => r.upstreamPerFloor).toFixed(2),
      mean((r) => r.outsideSeconds).toFixed(1),
      `${mean((r) => r.requestsPerMinimum).toFixed(3)} (${mean((r) => r.refused).toFixed(0)}, ${Math.max(...rows.map((r) => r.refused))})`,
      mean((r) => r.tokenRequests).toFixed(0),
      mean((r) => r.writesPerRequest).toFixed(2),
      mean((r) => r.floorSeconds).toFixed(1),
      mean((r) => r.load).toFixed(1),
    ].join(" | ");
  });
  return `${[head.join(" | "), head.map(() => "---").join(" | "), ...lines].map((l) => `| ${l} |`).join("\n")}\n`;
}

function row(
  limiter: string,
  controller: string,
  settings: LimiterSettings,
  run: CloudRun | SyncRun,
): CloudRateRow {
  const cloud = "invocations" in run ? run : undefined;
  const cli = "invocations" in run ? undefined : run;
  const minimum = run.minimum.total + 1;
  const floor = limiterFloorSeconds({
    limiter: settings,
    requests: minimum,
    latencyMs: LATENCY_MS,
    concurrency: WORKER_CONCURRENCY,
    chainRoundTrips: run.minimum.chainRoundTrips,
  });
  const round = (n: number) => Math.round(n * 1000) / 1000;
  const upstreamSeconds = (run.server.spanMs ?? 0) / 1000 + LATENCY_MS / 1000;
  const outsideSeconds = run.syncMs / 1000 - upstreamSeconds;
  const rateWrites = cloud?.aws?.dynamodbWritesByKind.rate ?? 0;
  return {
    limiter,
    controller,
    ok: run.ok,
    syncSeconds: round(run.syncMs / 1000),
    upstreamSeconds: round(upstreamSeconds),
    outsideSeconds: round(outsideSeconds),
    floorSeconds: round(floor),
    wallPerFloor: round(run.syncMs / 1000 / floor),
    wallPerCloudFloor: round(run.syncMs / 1000 / (floor + outsideSeconds)),
    upstreamPerFloor: round(upstreamSeconds / floor),
    requests: run.server.requests,
    refused: run.server.throttled,
    minimum,
    requestsPerMinimum: round(run.server.requests / minimum),
    tokenRequests: run.server.byRoute.token ?? 0,
    rateWrites,
    writesPerRequest: round(rateWrites / Math.max(1, run.server.requests)),
    workerInvocations: cloud?.invocations.syncWorker ?? 0,
    cpuSeconds: cloud?.cpuSeconds ?? { emulator: 0, harness: (cli?.cpuMs ?? 0) / 1000 },
    load: loadavg()[0] ?? 0,
    ...(run.error ? { error: run.error } : {}),
  };
}

/** The worker's bundle with the per-second counter in place of the shared model, zipped. */
async function counterBundle(root: string): Promise<Buffer> {
  const counter = join(root, "bench", "cloudRate", "perSecondCounter.ts");
  const swap: Plugin = {
    name: "per-second-counter",
    setup(on) {
      on.onResolve({ filter: /\/aws\/sharedRate$/ }, () => ({ path: counter }));
    },
  };
  const result = await build({
    entryPoints: [join(root, "functions", "sync-worker", "handler.ts")],
    bundle: true,
    platform: "node",
    target: "node20",
    format: "esm",
    mainFields: ["module", "main"],
    minify: true,
    // An ESM bundle has no `require`; CommonJS dependencies inside it call it for built-ins.
    banner: {
      js: 'import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);',
    },
    write: false,
    plugins: [swap],
    logLevel: "warning",
  });
  const code = result.outputFiles[0]?.text ?? "";
  return new Promise((resolve, reject) => {
    const zip = new yazl.ZipFile();
    zip.addBuffer(Buffer.from(code), "handler.mjs");
    zip.end();
    const chunks: Buffer[] = [];
    zip.outputStream.on("data", (chunk: Buffer) => chunks.push(chunk));
    zip.outputStream.on("end", () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on("error", reject);
  });
}
