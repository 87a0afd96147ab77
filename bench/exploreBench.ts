/**
 * `npm run bench -- --explore`: `explore` on snapshots a sync wrote from the BlackLine simulator
 * (pages of 1,000, no latency, no rate limit): 100,000 users in 2,000 teams and 1,000,000 users in
 * 20,000 teams, 50 roles, 0 to 6 teams a user. Each snapshot is written once into
 * .build/explore-bench/ and reused by later runs (a 1,000,000-user sync takes minutes and 860 MB).
 * For each: the executable started twice in a fresh process, as a user starts it (its `#!` line's
 * memory settings apply; through `node` they would not), the first start building the index
 * beside the snapshot and the second reading it back, each timed from spawn to the printed address
 * (wall, and the CPU the process had used by then), then searched and paged over HTTP as the page
 * does, then stopped; peak RSS and CPU from bench/processProbe.mjs (the process's, both threads).
 * The same with `--diff` against a second name (a hard link) of the same snapshot: two indexes
 * built at once (the older one in a worker thread, without its search) and compared, no change
 * found (the cost of comparing is there, its result empty). Prints one JSON line a run. It measures and asserts nothing.
 */
import { existsSync } from "node:fs";
import { link, mkdir, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { indexPathOf } from "../lib/explore";
import type { TenantSize } from "../lib/simulators/blackline";
import { startExplore } from "../test/explore/exploreProcess";
import { runToEnd, startHostedSimulator } from "./processes";

const TENANTS: { name: string; size: TenantSize }[] = [
  { name: "100k", size: { users: 100_000, teams: 2_000, roles: 50, maxTeamsPerUser: 6 } },
  { name: "1m", size: { users: 1_000_000, teams: 20_000, roles: 50, maxTeamsPerUser: 6 } },
];

/** What the page asks for: each search as typed into the Accounts tab (first page of 50). */
const SEARCHES = ["ada", "smith", "example", "zzz-nothing", "john smith", "u4242"];

export interface ExploreRun {
  tenant: string;
  start: "first" | "second";
  diff: boolean;
  readySeconds: number;
  /** CPU (user and system) the process had used when it printed its address: on a loaded machine, the figure to read. */
  readyCpuSeconds: number;
  peakRssMiB: number;
  cpuSeconds: number;
  indexMiB: number;
  /** Milliseconds per request: the median of 5 (the page's first request of each kind). */
  requests: Record<string, { ms: number; total?: number }>;
}

async function sync(root: string, file: string, size: TenantSize, host: string) {
  const simulator = await startHostedSimulator(host, {
    connector: "blackline",
    size,
    upstream: { latencyMs: 0, maxPageSize: 1000 },
  });
  try {
    const run = await runToEnd(
      join(root, "bin", "access-connectors.js"),
      ["sync", "blackline", "--json", "--out", file],
      { env: { ...process.env, ...simulator.ready.env }, timeoutMs: 60 * 60_000 },
    );
    if (run.code !== 0) throw new Error(`sync exited ${run.code}: ${run.stderr.slice(-500)}`);
  } finally {
    await simulator.stop();
  }
}

/** The CPU seconds a running process has used, from /proc (`utime` and `stime`, in ticks of 1/100 s). */
async function cpuSecondsOf(pid: number | undefined): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function timed(url: string, token: string) {
  const times: number[] = [];
  let total: number | undefined;
  for (let k = 0; k < 5; k++) {
    const began = performance.now();
    const answer = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    const body = (await answer.json()) as { total?: number };
    times.push(performance.now() - began);
    total = body.total;
  }
  times.sort((a, b) => a - b);
  return {
    ms: Math.round((times[2] as number) * 10) / 10,
    ...(total === undefined ? {} : { total }),
  };
}

async function runExplore(root: string, args: string[], probe: string) {
  const began = performance.now();
  const explore = await startExplore(
    args,
    [
      "/usr/bin/env",
      `NODE_OPTIONS=--import=${pathToFileURL(join(root, "bench", "processProbe.mjs")).href}`,
      `BENCH_PROCESS_FILE=${probe}`,
    ],
    { executable: true },
  );
  const readySeconds = (performance.now() - began) / 1000;
  const readyCpuSeconds = await cpuSecondsOf(explore.child.pid);
  const base = `http://127.0.0.1:${explore.port}/api`;
  const requests: ExploreRun["requests"] = {};
  requests.summary = await timed(`${base}/summary`, explore.token);
  requests["accounts, first page"] = await timed(`${base}/accounts`, explore.token);
  for (const q of SEARCHES)
    requests[`search "${q}"`] = await timed(
      `${base}/accounts?q=${encodeURIComponent(q)}`,
      explore.token,
    );
  requests["accounts by login, desc, page 100"] = await timed(
    `${base}/accounts?sort=login&dir=desc&offset=5000&limit=50`,
    explore.token,
  );
  requests["risk: disabled with access"] = await timed(
    `${base}/accounts?risk=disabled_with_access`,
    explore.token,
  );
  requests["entitlements, first page"] = await timed(`${base}/entitlements`, explore.token);
  await explore.stop();
  const measured = JSON.parse(await readFile(probe, "utf8")) as {
    peakRssBytes: number;
    cpuMs: number;
  };
  return {
    readySeconds: Math.round(readySeconds * 10) / 10,
    readyCpuSeconds,
    peakRssMiB: Math.round(measured.peakRssBytes / 2 ** 20),
    cpuSeconds: Math.round(measured.cpuMs / 100) / 10,
    requests,
  };
}

/** Runs every tenant (or those `only` names), printing each run; returns them all. */
export async function benchExplore(root: string, only?: string[]): Promise<ExploreRun[]> {
  const dir = join(root, ".build", "explore-bench");
  await mkdir(dir, { recursive: true });
  const host = join(root, "dist", "bench", "simulatorHost.mjs");
  const runs: ExploreRun[] = [];
  for (const { name, size } of TENANTS.filter((t) => !only || only.includes(t.name))) {
    const snapshot = join(dir, `blackline-${name}.jsonl`);
    if (!existsSync(snapshot)) {
      process.stderr.write(`bench explore: syncing ${name} into ${snapshot}\n`);
      await sync(root, snapshot, size, host);
    }
    const old = join(dir, `blackline-${name}-old.jsonl`);
    for (const diff of [false, true]) {
      if (diff && !existsSync(old)) await link(snapshot, old);
      const files = diff ? [snapshot, old] : [snapshot];
      for (const file of files) await rm(indexPathOf(file), { force: true });
      for (const start of ["first", "second"] as const) {
        process.stderr.write(`bench explore: ${name}${diff ? " --diff" : ""}, ${start} start\n`);
        const args = [snapshot, ...(diff ? ["--diff", old] : []), "--port", "0"];
        const run = await runExplore(root, args, join(dir, "probe.json"));
        const indexMiB = Math.round((await stat(indexPathOf(snapshot))).size / 2 ** 20);
        const result: ExploreRun = { tenant: name, start, diff, indexMiB, ...run };
        process.stdout.write(`${JSON.stringify(result)}\n`);
        runs.push(result);
      }
    }
  }
  return runs;
}
