/**
 * `npm run bench -- --diff`: `diff` of two generated 100,000-user snapshots (400,000 grants each,
 * test/diff/tenantSnapshot.ts) through the executable in a fresh process: wall, peak RSS, CPU.
 * Writes the "## Diff" section of BENCHMARKS.md in place (the full run writes it too).
 */
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { writeTenantSnapshot } from "../test/diff/tenantSnapshot";
import { runToEnd } from "./processes";
import { thisMachine } from "./report";

export interface DiffBenchRun {
  name: string;
  args: string;
  records: number;
  mebibytes: number;
  /** Lines before diff_end (--json only). */
  changes?: number;
  exit: number | null;
  wallSeconds: number;
  peakRssMiB: number;
  cpuSeconds: number;
}

/** A tenant of `users` users in 2,000 teams, 4 teams a user, and the same a sync later with 1% changes. */
function pair(users: number) {
  const pick = (count: number, offset: number) =>
    Array.from({ length: count }, (_, i) => (i * 97 + offset) % users);
  const tenant = { users, teams: 2_000, teamsPerUser: 4 };
  const edits = {
    removeUsers: pick(users / 100, 1),
    addUsers: users / 100,
    disable: pick(users / 200, 2),
    rename: pick(users / 200, 3),
    relogin: pick(users / 500, 4),
    reemail: pick(users / 500, 5),
    removeTeams: [7, 8],
    addTeams: 3,
    removeGrants: pick(users / 50, 6).map((u) => [u, (u * 7) % 2_000] as [number, number]),
  };
  return { tenant, edits };
}
export const DIFF_TENANT =
  "100,000 users, 2,000 teams, 4 teams a user (400,000 grants); new: 1,000 users removed and 1,000 added, 500 disabled, 500 renamed, 400 new logins or emails, 2 teams removed and 3 added, 2,000 more grants removed (diff-20k and diff-200k: the same shares of 20,000 and 200,000 users)";

/** Writes the pair of `users` users under `work`; returns the files and their records. */
async function writePair(work: string, users: number) {
  const { tenant, edits } = pair(users);
  const oldFile = join(work, `diff-${users}-old.jsonl`);
  const newFile = join(work, `diff-${users}-new.jsonl`);
  const sides = [
    await writeTenantSnapshot(oldFile, tenant),
    await writeTenantSnapshot(newFile, { ...tenant, syncId: "sync-2", edits, reverse: true }),
  ];
  // Users, grants, and a team resource and entitlement a team.
  const teams = [tenant.teams, tenant.teams - edits.removeTeams.length + edits.addTeams];
  const records = sides.map((side, i) => side.users + side.grants + 2 * (teams[i] ?? 0));
  return {
    oldFile,
    newFile,
    records: (records[0] ?? 0) + (records[1] ?? 0),
    oldRecords: records[0] ?? 0,
  };
}

interface BenchCase {
  name: string;
  files: string[];
  json: boolean;
  records: number;
  /** `--version` alone: the executable's own memory. */
  version?: boolean;
  /** Run as `node bin/access-connectors.js`, which skips the `#!` line's flags. */
  viaNode?: boolean;
}

function caseArgs(c: BenchCase): string {
  const gzip = c.files.map((f) => f.endsWith(".gz"));
  const what = c.version
    ? "--version"
    : `diff OLD NEW${c.json ? " --json" : ""}${gzip.every(Boolean) ? " (gzip)" : gzip.some(Boolean) ? " (NEW gzip)" : ""}`;
  return c.viaNode ? `node bin/access-connectors.js ${what}` : what;
}

export async function benchDiff(root: string, work: string): Promise<DiffBenchRun[]> {
  const main = await writePair(work, 100_000);
  const { oldFile, newFile, records } = main;
  for (const file of [oldFile, newFile]) {
    await writeFile(`${file}.gz`, gzipSync(await readFile(file)));
  }
  const cases: BenchCase[] = [
    { name: "version", files: [], json: false, records: 0, version: true },
    { name: "version-node", files: [], json: false, records: 0, version: true, viaNode: true },
    { name: "diff-100k", files: [oldFile, newFile], json: true, records },
    { name: "diff-100k-human", files: [oldFile, newFile], json: false, records },
    { name: "diff-100k-gzip", files: [`${oldFile}.gz`, `${newFile}.gz`], json: true, records },
    {
      name: "diff-100k-equal",
      files: [oldFile, oldFile],
      json: true,
      records: 2 * main.oldRecords,
    },
    // As the reviewer ran it: `node bin/...` skips the #! line, so its V8 and malloc flags too.
    {
      name: "diff-100k-gzip-new-node",
      files: [oldFile, `${newFile}.gz`],
      json: true,
      viaNode: true,
      records,
    },
  ];
  for (const users of [20_000, 200_000]) {
    const scaled = await writePair(work, users);
    cases.push({
      name: `diff-${users / 1000}k`,
      files: [scaled.oldFile, scaled.newFile],
      json: true,
      records: scaled.records,
    });
  }
  const runs: DiffBenchRun[] = [];
  for (const c of cases) {
    process.stderr.write(`bench: ${c.name}\n`);
    const probeFile = join(work, `${c.name}.process.json`);
    const bin = join(root, "bin", "access-connectors.js");
    const args = c.version ? ["--version"] : ["diff", ...c.files, ...(c.json ? ["--json"] : [])];
    const [command, argv] = c.viaNode ? [process.execPath, [bin, ...args]] : [bin, args];
    const finished = await runToEnd(command, argv, {
      timeoutMs: 10 * 60_000,
      env: {
        ...process.env,
        NODE_OPTIONS: `--import=${pathToFileURL(join(root, "bench", "processProbe.mjs")).href}`,
        BENCH_PROCESS_FILE: probeFile,
      },
    });
    const probe = JSON.parse(await readFile(probeFile, "utf8")) as {
      peakRssBytes: number;
      cpuMs: number;
    };
    const sizes = await Promise.all(c.files.map((file) => stat(file).then((s) => s.size)));
    const end =
      c.json && !c.version
        ? (JSON.parse(finished.stdout.trim().split("\n").at(-1) ?? "{}") as {
            counts?: Record<string, Record<string, number>>;
          })
        : {};
    const changes = Object.entries(end.counts ?? {})
      .filter(([kind]) => kind !== "accounts")
      .flatMap(([, counts]) => Object.values(counts))
      .reduce((a, b) => a + b, 0);
    runs.push({
      ...(c.json ? { changes } : {}),
      name: c.name,
      args: caseArgs(c),
      records: c.records,
      mebibytes: sizes.reduce((a, b) => a + b, 0) / 2 ** 20,
      exit: finished.code,
      wallSeconds: finished.wallMs / 1000,
      peakRssMiB: probe.peakRssBytes / 2 ** 20,
      cpuSeconds: probe.cpuMs / 1000,
    });
  }
  return runs;
}

/** The "## Diff" section of BENCHMARKS.md. */
export function renderDiffSection(runs: DiffBenchRun[], when: string): string {
  const row = (r: DiffBenchRun) =>
    `| ${r.name} | \`${r.args}\` | ${r.records.toLocaleString("en-US")} | ${r.mebibytes.toFixed(0)} | ${r.changes?.toLocaleString("en-US") ?? "–"} | ${r.exit} | ${r.wallSeconds.toFixed(1)} | ${r.peakRssMiB.toFixed(1)} | ${r.cpuSeconds.toFixed(1)} | ${Math.round(r.records / r.wallSeconds).toLocaleString("en-US")} |`;
  return [
    "## Diff",
    "",
    `\`npm run bench -- --diff\`, ${when}. Two generated snapshots (test/diff/tenantSnapshot.ts): ${DIFF_TENANT}.`,
    "`diff` sorts each file's records by key into runs of 50,000 on disk and merge-joins them, so",
    "memory does not grow with the snapshots beyond a read buffer a run (at most 32 runs a file are",
    "merged at once); the executable alone (`--version`) peaks at about 80 MiB. The executable's `#!` line",
    "sets `MALLOC_ARENA_MAX=2`, `MALLOC_MMAP_THRESHOLD_=131072`, `--max-semi-space-size=4` and `--heap-growing-percent=30` (bin/access-connectors.js);",
    "run as `node bin/access-connectors.js` none applies and V8 lets the heap grow further before collecting",
    "(the `node` rows): same work and CPU, more peak RSS. *Changes* counts the JSON lines before `diff_end`",
    "(an account's status and name changed together are one line); *peak RSS* is the process's VmHWM,",
    "*CPU* its user and system time; *records / s* both files' records over the wall time.",
    "",
    "| case | command | records | MiB read | changes | exit | wall s | peak RSS MiB | CPU s | records / s |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...runs.map(row),
    "",
  ].join("\n");
}

/** Replaces the "## Diff" section of `text`, or puts it before "## Starting" (else at the end). */
export function spliceDiffSection(text: string, section: string): string {
  const start = text.indexOf("\n## Diff\n");
  if (start !== -1) {
    const next = text.indexOf("\n## ", start + 1);
    return `${text.slice(0, start + 1)}${section}${next === -1 ? "" : text.slice(next)}`;
  }
  const before = text.indexOf("\n## Starting");
  if (before === -1) return `${text.trimEnd()}\n\n${section}`;
  return `${text.slice(0, before + 1)}${section}${text.slice(before)}`;
}

/** Runs the diff cases and writes their section into BENCHMARKS.md, the rest of it unchanged. */
export async function writeDiffSection(root: string): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), "ac-bench-diff-"));
  const m = thisMachine();
  const busy =
    m.loadAtStart > m.cores ? " (a busy machine: wall times grow with the load, CPU s less)" : "";
  const when = `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${m.cpu}, ${m.cores} cores, Node ${m.node}, load average ${m.loadAtStart} at the start${busy}`;
  try {
    const runs = await benchDiff(root, work);
    for (const run of runs) process.stdout.write(`${JSON.stringify(run)}\n`);
    const target = join(root, "BENCHMARKS.md");
    const text = await readFile(target, "utf8").catch(() => "# Benchmarks\n");
    await writeFile(target, spliceDiffSection(text, renderDiffSection(runs, when)));
    process.stderr.write(`bench: wrote the Diff section of ${target}\n`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
