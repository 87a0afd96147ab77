/**
 * One sync through the command line, as a user runs it: the executable `bin/access-connectors.js`
 * in a fresh process (its own Node flags apply), against a simulator in another process, with no
 * connector setting but the simulator's address and credentials.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { RateChange } from "../lib/http/RateLimiter";
import type { SyncSummary } from "../lib/sync";
import { runToEnd, startHostedSimulator } from "./processes";
import { rateTrace } from "./rateTrace";
import type { Scenario } from "./scenarios";
import type { MinimumRequests, SimulatorStats } from "./simulatorHost";

export interface BenchPaths {
  root: string;
  /** The bundled simulator host. */
  simulatorHost: string;
  /** Preloaded into the sync's process: its peak RSS and CPU time. */
  processProbe: string;
  /** A directory for snapshots and probe files. */
  work: string;
}

export interface SyncRun {
  ok: boolean;
  /** The sync's own duration (its summary), and the process's from spawn to exit. */
  syncMs: number;
  processMs: number;
  /** Attempts the client sent, token and count requests included (its summary). */
  requests: number;
  server: SimulatorStats;
  minimum: MinimumRequests;
  records: number;
  peakRssBytes: number;
  /** CPU time of the sync's process, user and system. */
  cpuMs: number;
  /** The end of stderr when the sync failed. */
  error?: string;
  /** In the limiter matrix: the learned rate's moves (bench/rateTrace.ts). */
  rateTrace?: RateChange[];
}

const CONCURRENCY_VARIABLE = {
  blackline: "CONNECTOR_ACCOUNTING_MAX_CONCURRENCY",
  valimail: "CONNECTOR_EMAILAUTH_MAX_CONCURRENCY",
} as const;

/** The bench's environment without any connector setting, so the defaults are measured. */
export function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("CONNECTOR_")),
  );
}

export async function runCliSync(
  scenario: Scenario,
  paths: BenchPaths,
  options: { concurrencyOne: boolean; tag: string; settings?: Record<string, string> | undefined },
): Promise<SyncRun> {
  const { connector } = scenario.simulator;
  const simulator = await startHostedSimulator(paths.simulatorHost, scenario.simulator);
  const probeFile = join(paths.work, `${options.tag}.process.json`);
  const out = join(paths.work, `${options.tag}.jsonl`);
  let finished: Awaited<ReturnType<typeof runToEnd>>;
  let server: SimulatorStats;
  try {
    finished = await runToEnd(
      join(paths.root, "bin", "access-connectors.js"),
      ["sync", connector, "--json", "--out", out, ...(scenario.matrix ? ["--verbose"] : [])],
      {
        cwd: paths.work,
        timeoutMs: 30 * 60_000,
        env: {
          ...cleanEnv(),
          ...simulator.ready.env,
          ...(options.concurrencyOne ? { [CONCURRENCY_VARIABLE[connector]]: "1" } : {}),
          ...options.settings,
          NODE_OPTIONS: `--import=${pathToFileURL(paths.processProbe).href}`,
          BENCH_PROCESS_FILE: probeFile,
        },
      },
    );
  } finally {
    server = await simulator.stop();
  }
  const probe = JSON.parse(
    await readFile(probeFile, "utf8").catch(() => '{"peakRssBytes":0,"cpuMs":0}'),
  ) as { peakRssBytes: number; cpuMs: number };
  const base = {
    processMs: finished.wallMs,
    server,
    minimum: simulator.ready.minimum,
    ...probe,
    ...(scenario.matrix ? { rateTrace: rateTrace(finished.stderr) } : {}),
  };
  if (finished.code !== 0) {
    return {
      ok: false,
      syncMs: finished.wallMs,
      requests: server.requests,
      records: 0,
      error: `exit ${finished.code}: ${finished.stderr.trim().split("\n").slice(-3).join(" | ")}`,
      ...base,
    };
  }
  const summary = JSON.parse(finished.stdout.trim().split("\n").at(-1) as string) as SyncSummary;
  return {
    ok: true,
    syncMs: summary.durationMs,
    requests: summary.requests,
    records: Object.values(summary.counts).reduce((a, b) => a + b, 0),
    ...base,
  };
}
