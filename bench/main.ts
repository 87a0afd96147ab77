/**
 * `npm run bench`: the scenarios of issue 8 and issue 16's limiter matrix against the simulators on
 * loopback, each sync in a fresh process; one JSON line per scenario on stdout, and BENCHMARKS.md.
 * `-- --diff` runs diff's cases alone (bench/diffBench.ts) and rewrites only their section.
 * `-- --export` runs export's and diff's cases on synced 100,000- and 1,000,000-user snapshots
 * (bench/exportBench.ts) and prints them, writing no file.
 * `-- --explore [--only 100k]` runs `explore`'s (bench/exploreBench.ts) alone and prints them.
 * `-- --quick` runs the small ones without their concurrency-1 runs (under a minute), `-- --matrix`
 * the limiter matrix alone (a few minutes), `-- --tenants` two tenants on one cloud stage
 * (bench/cloudTenants.ts, JSON on stdout), `-- --transactions` one DynamoDB transaction on the AWS
 * tier's emulator as its table grows (bench/transactBench.ts), `-- --only a,b` the named scenarios (`*` matches any
 * characters: `--only 'limiter-bucket-*'`); each of them writes .build/BENCHMARKS.partial.md
 * instead. `-- --cloud-finalize [--users 10000,20000]` measures the cloud finalize's
 * shard reads in process (bench/shardReads.ts), then the finalize function alone
 * (bench/cloudFinalize.ts), and prints their JSON lines; `-- --finalize-memory [--users
 * 10000,100000]` finalize's work alone in a process a run, its peak RSS and live memory
 * (bench/finalizeMemory.ts); `-- --cloud-sweep [--instances 10000]` the
 * scheduler's sweep of that many due instances (bench/cloudSweep.ts). `-- --cloud-scale
 * [--users 10000,20000]` runs a BlackLine sync of each size through the packaged stack
 * (bench/cloudScale.ts) and prints the capacity model carried to 1,000,000 and 10,000,000 users
 * and to 1,000 and 10,000 tenants (bench/capacity.ts); `--no-exact` skips comparing each upload
 * with a command-line sync of the same tenant. `-- --tenants [--large 50000 --small 500]`
 * sets the two tenants' users. `-- --cloud-rate [--only bucket-counter,window-model] [--runs 3]`
 * the rate the cloud's workers share behind a token bucket and a fixed window, the shared rate
 * model beside the per-second counter it replaced, the model told, and one process
 * (bench/cloudRate.ts), each row `--runs` times, the table their mean and spread. It
 * measures and asserts nothing.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type Artifacts, measureArtifacts } from "./artifacts";
import { renderCapacity } from "./capacity";
import { type BenchPaths, runCliSync } from "./cliSync";
import { runFinalizeBench } from "./cloudFinalize";
import { runCloudRate } from "./cloudRate";
import { runCloudScale } from "./cloudScale";
import { runSweepBench } from "./cloudSweep";
import { runCloudSync } from "./cloudSync";
import { runCloudTenants } from "./cloudTenants";
import { writeDiffSection } from "./diffBench";
import { benchExplore } from "./exploreBench";
import { benchExport } from "./exportBench";
import { measureFinalizeMemory } from "./finalizeMemory";
import { renderReport, thisMachine } from "./report";
import {
  checkTargets,
  failedResult,
  type ScenarioResult,
  scenarioResult,
  settingsText,
  toldResult,
} from "./results";
import { SCENARIOS, type Scenario, TENANTS_LARGE, TENANTS_SMALL, tenantOf } from "./scenarios";
import { runServiceSync } from "./serviceSync";
import { measureShardReads } from "./shardReads";
import { measureTransactions } from "./transactBench";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    matrix: { type: "boolean", default: false },
    diff: { type: "boolean", default: false },
    export: { type: "boolean", default: false },
    "cloud-finalize": { type: "boolean", default: false },
    "finalize-memory": { type: "boolean", default: false },
    users: { type: "string", default: "10000,20000" },
    "cloud-sweep": { type: "boolean", default: false },
    instances: { type: "string", default: "10000" },
    explore: { type: "boolean", default: false },
    tenants: { type: "boolean", default: false },
    large: { type: "string" },
    small: { type: "string" },
    "cloud-scale": { type: "boolean", default: false },
    "no-exact": { type: "boolean", default: false },
    "cloud-rate": { type: "boolean", default: false },
    transactions: { type: "boolean", default: false },
    only: { type: "string" },
    runs: { type: "string", default: "1" },
    root: { type: "string" },
  },
});
const root = values.root ?? process.cwd();
if (values.explore) {
  await benchExplore(root, values.only?.split(","));
  process.exit(0);
}
if (values["cloud-rate"]) {
  const work = await mkdtemp(join(tmpdir(), "ac-bench-"));
  const simulatorHost = join(root, "dist", "bench", "simulatorHost.mjs");
  try {
    const processProbe = join(root, "bench", "processProbe.mjs");
    const runs = Number(values.runs);
    if (!Number.isInteger(runs) || runs < 1)
      throw new Error(`--runs ${values.runs}: a whole number, 1 or more`);
    await runCloudRate({ root, simulatorHost, processProbe, work }, values.only?.split(","), runs);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  process.exit(0);
}
if (values.diff) {
  await writeDiffSection(root);
  process.exit(0);
}
if (values.transactions) {
  const timings = await measureTransactions([0, 1_000, 10_000]);
  process.stdout.write(`${JSON.stringify({ transactions: timings })}\n`);
  process.exit(0);
}
if (values.tenants) {
  const work = await mkdtemp(join(tmpdir(), "ac-bench-"));
  const simulatorHost = join(root, "dist", "bench", "simulatorHost.mjs");
  const run = await runCloudTenants(
    { root, simulatorHost, processProbe: "", work },
    {
      large: values.large ? tenantOf(Number(values.large)) : TENANTS_LARGE,
      small: values.small ? tenantOf(Number(values.small)) : TENANTS_SMALL,
    },
  );
  process.stdout.write(`${JSON.stringify({ tenants: run })}\n`);
  await rm(work, { recursive: true, force: true });
  process.exit(0);
}
/** A name, or a pattern where `*` stands for any characters. */
const namePattern = (pattern: string) =>
  new RegExp(`^${pattern.split("*").map(escapeRegExp).join(".*")}$`);
function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
const only = values.only?.split(",").map((pattern) => ({ pattern, test: namePattern(pattern) }));
const unknown = only?.filter(({ test }) => !SCENARIOS.some((s) => test.test(s.name))) ?? [];
if (unknown.length > 0) {
  throw new Error(
    `--only: no scenario ${unknown.map((u) => u.pattern).join(", ")}; there are ${SCENARIOS.map((s) => s.name).join(", ")}`,
  );
}
const chosen = SCENARIOS.filter((s) =>
  only
    ? only.some(({ test }) => test.test(s.name))
    : values.matrix
      ? s.matrix
      : !values.quick || s.quick,
);
const partial = values.quick || values.matrix || only !== undefined;

if (values["cloud-sweep"]) {
  await runSweepBench(Number(values.instances));
  process.exit(0);
}
const machine = thisMachine();
const work = await mkdtemp(join(tmpdir(), "ac-bench-"));
const paths: BenchPaths = {
  root,
  simulatorHost: join(root, "dist", "bench", "simulatorHost.mjs"),
  processProbe: join(root, "bench", "processProbe.mjs"),
  work,
};
if (values.export) {
  try {
    await benchExport(paths);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  process.exit(0);
}
if (values["cloud-scale"]) {
  try {
    const runs = await runCloudScale(paths, values.users.split(",").map(Number), {
      exact: !values["no-exact"],
    });
    process.stdout.write(`\n${renderCapacity(runs)}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  process.exit(0);
}
if (values["finalize-memory"]) {
  try {
    await measureFinalizeMemory(paths, values.users.split(",").map(Number));
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  process.exit(0);
}
if (values["cloud-finalize"]) {
  try {
    await measureShardReads(work);
    await runFinalizeBench(paths, values.users.split(",").map(Number));
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  process.exit(0);
}

async function runScenario(scenario: Scenario): Promise<ScenarioResult> {
  process.stderr.write(`bench: ${scenario.name}\n`);
  if (scenario.runtime === "cloud")
    return scenarioResult(scenario, await runCloudSync(scenario, paths));
  if (scenario.runtime === "service")
    return scenarioResult(scenario, await runServiceSync(scenario, paths));
  const run = await runCliSync(scenario, paths, { concurrencyOne: false, tag: scenario.name });
  if (scenario.told) {
    process.stderr.write(`bench: ${scenario.name} told ${settingsText(scenario.told)}\n`);
    const told = await runCliSync(scenario, paths, {
      concurrencyOne: false,
      tag: `${scenario.name}-told`,
      settings: scenario.told,
    });
    return { ...scenarioResult(scenario, run), told: toldResult(scenario, told) };
  }
  if (values.quick || scenario.matrix) return scenarioResult(scenario, run);
  if (scenario.once) {
    process.stderr.write(`bench: ${scenario.name} again, onto its snapshot\n`);
    const again = await runCliSync(scenario, paths, { concurrencyOne: false, tag: scenario.name });
    return scenarioResult(scenario, run, undefined, again);
  }
  process.stderr.write(`bench: ${scenario.name} at concurrency 1\n`);
  const sequential = await runCliSync(scenario, paths, {
    concurrencyOne: true,
    tag: `${scenario.name}-c1`,
  });
  return scenarioResult(scenario, run, sequential.ok ? sequential : undefined);
}

const results: ScenarioResult[] = [];
let artifacts: Artifacts | undefined;
try {
  for (const scenario of chosen) {
    const result = await runScenario(scenario).catch((error: unknown) =>
      failedResult(scenario, error),
    );
    results.push(result);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    for (const tag of [scenario.name, `${scenario.name}-c1`, `${scenario.name}-told`]) {
      await rm(join(work, `${tag}.jsonl`), { force: true });
    }
  }
  if (!partial) {
    process.stderr.write("bench: bundles and start times\n");
    artifacts = await measureArtifacts(root).catch((error: unknown) => {
      process.stderr.write(`bench: bundles and start times not measured: ${String(error)}\n`);
      return undefined;
    });
    if (artifacts) process.stdout.write(`${JSON.stringify({ artifacts })}\n`);
  }
} finally {
  await rm(work, { recursive: true, force: true });
}

const report = renderReport({
  machine,
  date: new Date(),
  quick: values.quick,
  results,
  ...(artifacts ? { artifacts } : {}),
  targets: checkTargets(results, artifacts),
});
const target = partial
  ? join(root, ".build", "BENCHMARKS.partial.md")
  : join(root, "BENCHMARKS.md");
await mkdir(join(root, ".build"), { recursive: true });
await writeFile(target, report);
process.stderr.write(`bench: wrote ${target}\n`);
if (!partial) await writeDiffSection(root);
