/**
 * `npm run bench -- --export`: `export --format csv`, `export --format c1z` and `diff` of
 * snapshots a sync wrote of the BlackLine simulator (pages of 1,000, no latency, no limit) at
 * 100,000 users (2,000 teams) and 1,000,000 users (20,000 teams), each command the built
 * executable (bin/access-connectors.js, so with its `#!` line's memory flags) in a fresh process
 * with bench/processProbe.mjs preloaded: wall time, peak RSS (VmHWM), CPU (user + system). `diff`
 * compares the snapshot with itself (equal: every record read, sorted and joined). The snapshots
 * are kept in BENCH_SNAPSHOTS (default: a directory in TMPDIR) and reused while there (the
 * 1,000,000-user sync takes about 860 MB). Prints one JSON line a run; writes no file of the
 * repository, and asserts nothing.
 */
import { mkdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { TenantSize } from "../lib/simulators/blackline";
import { type BenchPaths, cleanEnv } from "./cliSync";
import { runToEnd, startHostedSimulator } from "./processes";

const TENANTS: { name: string; size: TenantSize }[] = [
  { name: "blackline-100k", size: { users: 100_000, teams: 2_000, roles: 50, maxTeamsPerUser: 6 } },
  {
    name: "blackline-1m",
    size: { users: 1_000_000, teams: 20_000, roles: 50, maxTeamsPerUser: 6 },
  },
];

export interface ExportBenchRun {
  tenant: string;
  command: string;
  exit: number | null;
  wallSeconds: number;
  peakRssMiB: number;
  cpuSeconds: number;
  /** What the command wrote (export), or its last line (diff). */
  output: string;
  outMiB?: number;
}

/** The snapshot of `tenant`, synced once and kept in `dir`. */
async function snapshotOf(
  tenant: (typeof TENANTS)[number],
  dir: string,
  paths: BenchPaths,
): Promise<string> {
  const file = join(dir, `${tenant.name}.jsonl`);
  if (
    await stat(file).then(
      (s) => s.size > 0,
      () => false,
    )
  )
    return file;
  process.stderr.write(`bench: syncing ${tenant.name} into ${file}\n`);
  const simulator = await startHostedSimulator(paths.simulatorHost, {
    connector: "blackline",
    size: tenant.size,
    upstream: { latencyMs: 0 },
  });
  try {
    const sync = await runToEnd(
      join(paths.root, "bin", "access-connectors.js"),
      ["sync", "blackline", "--json", "--out", file],
      { env: { ...cleanEnv(), ...simulator.ready.env }, timeoutMs: 30 * 60_000 },
    );
    if (sync.code !== 0) throw new Error(`the sync of ${tenant.name} failed: ${sync.stderr}`);
  } finally {
    await simulator.stop();
  }
  return file;
}

async function measure(
  paths: BenchPaths,
  tenant: string,
  args: string[],
  out?: string,
): Promise<ExportBenchRun> {
  const probeFile = join(paths.work, "process.json");
  const finished = await runToEnd(join(paths.root, "bin", "access-connectors.js"), args, {
    env: {
      ...cleanEnv(),
      NODE_OPTIONS: `--import=${pathToFileURL(paths.processProbe).href}`,
      BENCH_PROCESS_FILE: probeFile,
    },
    timeoutMs: 60 * 60_000,
  });
  const probe = JSON.parse(await readFile(probeFile, "utf8")) as {
    peakRssBytes: number;
    cpuMs: number;
  };
  const run: ExportBenchRun = {
    tenant,
    command: args[0] === "export" ? `export --format ${args[3]}` : "diff SNAPSHOT SNAPSHOT --json",
    exit: finished.code,
    wallSeconds: +(finished.wallMs / 1000).toFixed(1),
    peakRssMiB: +(probe.peakRssBytes / 2 ** 20).toFixed(1),
    cpuSeconds: +(probe.cpuMs / 1000).toFixed(1),
    output:
      (finished.code === 0 ? finished.stdout : finished.stderr).trim().split("\n").at(-1) ?? "",
  };
  if (out) {
    run.outMiB = +((await stat(out)).size / 2 ** 20).toFixed(1);
    await rm(out, { force: true });
  }
  return run;
}

/** Runs every case of every tenant; one JSON line a run on stdout. */
export async function benchExport(paths: BenchPaths): Promise<ExportBenchRun[]> {
  const dir = process.env.BENCH_SNAPSHOTS ?? join(tmpdir(), "access-connectors-bench-snapshots");
  await mkdir(dir, { recursive: true });
  const runs: ExportBenchRun[] = [];
  for (const tenant of TENANTS) {
    const snapshot = await snapshotOf(tenant, dir, paths);
    for (const format of ["csv", "c1z"]) {
      const out = join(paths.work, `${tenant.name}.${format}`);
      process.stderr.write(`bench: export ${tenant.name} --format ${format}\n`);
      runs.push(
        await measure(paths, tenant.name, ["export", snapshot, "--format", format, out], out),
      );
      process.stdout.write(`${JSON.stringify(runs.at(-1))}\n`);
    }
    process.stderr.write(`bench: diff ${tenant.name} with itself\n`);
    runs.push(await measure(paths, tenant.name, ["diff", snapshot, snapshot, "--json"]));
    process.stdout.write(`${JSON.stringify(runs.at(-1))}\n`);
  }
  return runs;
}
