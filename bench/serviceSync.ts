/**
 * A tenant synced by the service, as a customer's container runs it: the executable
 * `bin/access-connectors.js service` in a fresh process (its own Node flags apply), the upstream
 * simulator in another process, the platform simulator in this one. The service syncs at start
 * and uploads; then a sync task from the platform runs a second sync, which the removal guard
 * compares with the first (its digest read back from the state directory), and the service is
 * stopped. Its peak RSS and CPU time cover both syncs.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { startPlatformSimulator } from "../lib/simulators/platform";
import type { BenchPaths, SyncRun } from "./cliSync";
import { cleanEnv } from "./cliSync";
import { startHostedSimulator } from "./processes";
import type { Scenario } from "./scenarios";
import type { SimulatorStats } from "./simulatorHost";

interface UploadedLine {
  message: string;
  counts?: Record<string, number>;
  durationMs?: number;
}

export async function runServiceSync(scenario: Scenario, paths: BenchPaths): Promise<SyncRun> {
  const simulator = await startHostedSimulator(paths.simulatorHost, scenario.simulator);
  const platform = await startPlatformSimulator({ pollIntervalSeconds: 1, keepText: false });
  const stateDir = join(paths.work, `${scenario.name}-state`);
  await mkdir(stateDir, { recursive: true });
  const probeFile = join(paths.work, `${scenario.name}.process.json`);
  const started = performance.now();
  const child = spawn(
    join(paths.root, "bin", "access-connectors.js"),
    ["service", scenario.simulator.connector],
    {
      env: {
        ...cleanEnv(),
        ...simulator.ready.env,
        ...platform.env("bench-host"),
        CONNECTOR_STATE_DIR: stateDir,
        CONNECTOR_SYNC_INTERVAL: "24h",
        NODE_OPTIONS: `--import=${pathToFileURL(paths.processProbe).href}`,
        BENCH_PROCESS_FILE: probeFile,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
  const exited = once(child, "close") as Promise<[number | null]>;
  const uploaded: UploadedLine[] = [];
  let failed: string | undefined;
  let server: SimulatorStats;
  try {
    for await (const text of createInterface({ input: child.stdout })) {
      const line = parseLine(text);
      if (line?.message === "sync failed") failed = text;
      if (line?.message !== "sync uploaded" && failed === undefined) continue;
      if (line?.message === "sync uploaded") uploaded.push(line);
      if (uploaded.length === 1 && failed === undefined) platform.enqueueTask({ type: "sync" });
      else child.kill("SIGTERM");
    }
    await exited;
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    server = await simulator.stop();
    await platform.close();
  }
  const processMs = performance.now() - started;
  const probe = JSON.parse(
    await readFile(probeFile, "utf8").catch(() => '{"peakRssBytes":0,"cpuMs":0}'),
  ) as { peakRssBytes: number; cpuMs: number };
  const first = uploaded[0];
  const ok = uploaded.length === 2 && failed === undefined;
  return {
    ok,
    syncMs: first?.durationMs ?? processMs,
    processMs,
    requests: server.requests,
    server,
    minimum: simulator.ready.minimum,
    records: Object.values(first?.counts ?? {}).reduce((a, b) => a + b, 0),
    ...probe,
    ...(ok ? {} : { error: failed ?? stderr.trim().split("\n").slice(-3).join(" | ") }),
  };
}

function parseLine(text: string): UploadedLine | undefined {
  try {
    return JSON.parse(text) as UploadedLine;
  } catch {
    return undefined;
  }
}
