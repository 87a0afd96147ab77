/** BENCHMARKS.md: the machine, the date, the scenarios' table, the cloud run, the bundles, the targets. */
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";
import { PAGES_AHEAD } from "../lib/sync/paging";
import type { Artifacts } from "./artifacts";
import { MATRIX_TARGETS, matrixTargetsMet, type ScenarioResult, type TargetCheck } from "./results";

export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  node: string;
  platform: string;
  /** The 1-minute load average when the bench started: other work on the machine skews times. */
  loadAtStart: number;
}

export function thisMachine(): Machine {
  return {
    cpu: cpus()[0]?.model.trim() ?? "unknown",
    cores: availableParallelism(),
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    loadAtStart: Number((loadavg()[0] ?? 0).toFixed(1)),
  };
}

const cell = (value: number | string | undefined) => (value === undefined ? "–" : String(value));
const fixed = (value: number | undefined, digits = 1) =>
  value === undefined ? "–" : value.toFixed(digits);
const grouped = (value: number) => value.toLocaleString("en-US");

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

export function renderReport(options: {
  machine: Machine;
  date: Date;
  quick: boolean;
  results: ScenarioResult[];
  artifacts?: Artifacts;
  targets: TargetCheck[];
}): string {
  const { machine, artifacts } = options;
  const results = options.results.filter((r) => !r.matrix);
  const matrix = options.results.filter((r) => r.matrix);
  const parts: string[] = [];
  parts.push(
    "# Benchmarks",
    "",
    `Written by \`npm run bench${options.quick ? " -- --quick" : ""}\` on ${options.date.toISOString().slice(0, 16).replace("T", " ")} UTC. Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.platform}, Node ${machine.node}; load average ${machine.loadAtStart} when it started.`,
    "",
    "Each sync runs the command line (`bin/access-connectors.js sync`) in a fresh process with no",
    "setting but the simulator's address and credentials, so the defaults are measured; the simulator",
    "runs in another process on loopback. *Minimum* is what the tenant needs at the server's largest",
    "page (pages of each list plus membership pages from the smaller side), computed from the tenant;",
    "*requests* are the simulator's count, 429s included. *Floor* is max(minimum / rate limit,",
    "minimum x latency / default concurrency). *Wall* is the command's process from spawn to exit (its",
    "start, the sync, the removal guard's check of the new snapshot); *sync* the sync alone, as its",
    "summary says; *conc. 1* the same command with the concurrency set to 1. *Peak RSS* is the sync process's VmHWM, *CPU* its",
    "user and system time. *Upstream span* runs from the first request the simulator saw to the last,",
    "with the rate kept over it: wall minus span is the process's start and the snapshot's completion.",
    "",
  );
  if (results.length > 0)
    parts.push(
      table(
        [
          "scenario",
          "tenant",
          "simulator",
          "wall s",
          "sync s",
          "requests (429s)",
          "minimum",
          "req / min",
          "floor s",
          "wall / floor",
          "conc. 1 s",
          "speed-up",
          "peak RSS MiB",
          "CPU s",
          "upstream span s (req/s)",
          "records / s",
        ],
        results.map((r) => [
          r.ok ? r.scenario : `${r.scenario} (failed)`,
          r.tenant,
          r.upstream,
          fixed(r.wallSeconds),
          fixed(r.syncSeconds),
          `${grouped(r.requests)} (${r.throttled})`,
          grouped(r.minimumRequests),
          fixed(r.requestsPerMinimum, 3),
          fixed(r.floorSeconds),
          fixed(r.wallPerFloor, 2),
          fixed(r.concurrencyOneWallSeconds),
          r.speedup === undefined ? "–" : `${r.speedup.toFixed(1)} x`,
          fixed(r.peakRssMiB),
          fixed(r.cpuSeconds),
          r.upstreamSpanSeconds === undefined
            ? "–"
            : `${fixed(r.upstreamSpanSeconds)} (${fixed(r.upstreamRate)})`,
          r.ok ? grouped(r.recordsPerSecond) : "–",
        ]),
      ),
    );
  const failed = options.results.filter((r) => !r.ok);
  if (failed.length > 0) {
    parts.push("", ...failed.map((r) => `- ${r.scenario} failed: ${r.error ?? "unknown"}`));
  }
  const quota = results.find((r) => r.quotaAllowsSeconds !== undefined);
  if (quota) {
    parts.push(
      "",
      `What the quota allows (${quota.scenario}): the blocks the minimum runs into plus the floor, ${fixed(quota.quotaAllowsSeconds)} s.`,
    );
  }
  const cloud = results.find((r) => r.cloud);
  if (cloud?.cloud) {
    const c = cloud.cloud;
    parts.push(
      "",
      `## ${cloud.scenario}`,
      "",
      "The packaged stack on moto_server (test/aws/harness): the scheduler invoked by `cloud sync`, the",
      "packaged worker and finalize handlers fed from the real queues. Wall is from `cloud sync` to the",
      "end of finalize; the harness runs one invocation at a time (Lambda would run up to the mapping's",
      "maximum concurrency, 10), so it is about the summed handler time, and wall / floor is not",
      "comparable with the command line's. Cost: summed handler time at each function's configured memory, at the arm64",
      "price ($0.0000133334 per GB-second, $0.20 per million requests); SQS, DynamoDB and S3 not counted.",
      "",
      table(
        [
          "jobs",
          "messages",
          "shards",
          "invocations (scheduler, worker, finalize)",
          "handler s (worker, finalize)",
          "memory MB (worker, finalize)",
          "GB-s",
          "Lambda $",
        ],
        [
          [
            grouped(c.jobs),
            grouped(c.messages),
            grouped(c.shards),
            `${c.invocations.scheduler}, ${c.invocations.syncWorker}, ${c.invocations.finalize}`,
            `${fixed(c.handlerMs.syncWorker / 1000)}, ${fixed(c.handlerMs.finalize / 1000)}`,
            `${c.memoryMb.syncWorker}, ${c.memoryMb.finalize}`,
            fixed(c.gbSeconds, 1),
            c.lambdaUsd.toFixed(6),
          ],
        ],
      ),
    );
  }
  if (matrix.length > 0) parts.push("", ...limiterMatrix(matrix));
  if (artifacts) {
    parts.push(
      "",
      "## Starting",
      "",
      "Each Lambda function's bundle (`.build/functions/<name>/handler.mjs`, minified) and a fresh",
      "`node` importing it (the import alone), best of 5; the command line's `--version`, spawn to exit,",
      `best of 5: ${Math.round(artifacts.cliStartMs)} ms.`,
      "",
      table(
        ["function", "bundle KiB", "zip KiB", "cold load ms"],
        artifacts.functions.map((f) => [
          f.name,
          cell(Math.round(f.bundleBytes / 1024)),
          cell(Math.round(f.zipBytes / 1024)),
          cell(Math.round(f.coldLoadMs)),
        ]),
      ),
    );
  }
  parts.push(
    "",
    "## Targets (issues 8 and 16)",
    "",
    table(
      ["target", "measured", "met"],
      options.targets.map((t) => [
        t.target,
        t.measured,
        t.met === undefined ? "not run" : t.met ? "yes" : "**no**",
      ]),
    ),
    "",
  );
  return parts.join("\n");
}

const yesNo = (met: boolean) => (met ? "yes" : "**no**");

/** The told run of a matrix row: its settings, its wall against the same floor, its 429s. */
function toldCell(r: ScenarioResult): string {
  const told = r.told;
  if (!told) return "–";
  if (!told.ok) return `${told.settings}: failed`;
  return `${told.settings}: ${fixed(told.wallPerFloor, 2)} (${told.throttled})`;
}

/** Issue 16's limiter matrix: each kind's wall against its own floor, and its requests. */
function limiterMatrix(rows: ScenarioResult[]): string[] {
  return [
    "## Limiter matrix",
    "",
    "blackline-10k's tenant and page cap behind each limiter of the simulators' catalogue",
    "(lib/simulators/README.md) at 50 requests/s and 40 ms, nothing configured on the connector's",
    "side; each scenario runs once (no concurrency-1 run). Targets (issue 16): wall / floor <=",
    `${MATRIX_TARGETS.wallPerFloor.toFixed(2)}, requests <= ${MATRIX_TARGETS.requestsPerMinimum} x minimum, 429s counted in requests. Wall`,
    "includes the process's start, 0.43 to 0.7 s here before the first list request (Node's own start",
    "0.12 to 0.19 s, loading the command, the token request), and the removal guard's check, which",
    "weigh most where the floor is short (the window of a minute).",
    "",
    "*Floor* is the earliest a client that knows the limiter exactly could have every answer: of N",
    "requests (the minimum and the token request, which goes first), latency L, the default",
    "concurrency C and the longest chain of T round trips (a list's pages as the connector reads",
    `them: its first, which gives the total, then ${PAGES_AHEAD + 1} a round trip, asked for ahead; the token request`,
    "before it), the largest of (1 + T) x L, ceil(N / C) x L and the limiter's own bound: for a token",
    "bucket of rate r and burst b (full at the start), (N - b) / r + L; for a window of W per s",
    "seconds, fixed or sliding, (ceil(N / W) - 1) x s + ceil(R / C) x L with R = N - (ceil(N / W) - 1)",
    "x W the last window's share (a window of 3,000 per minute never binds; one of 500 per 10 s makes",
    "the last 79 wait for the second window); for a cap of k in flight, ceil(N / k) x L. See",
    "bench/floors.ts. L is the latency setting, 40 ms; *answer ms* is the simulator's own time per",
    "answer in the learned run, from a request's arrival to its answer's last byte, on average (its",
    "timers' slack and its handler on top of the setting): no client gets its answers sooner, so",
    "where a chain or a cap binds, the floor at that L is that much lower than any client reaches.",
    "*Learned rate* sums up the trace of the rate controller's moves that the sync",
    "logs with `--verbose` (`learned rate moved`): the last edge and cap learned and when (seconds",
    "from the connector's client's start, a few hundred ms after the process's), the pace's cuts, and",
    "the time every start was held by blocks (bench/rateTrace.ts). *Told* is the same sync once more",
    "with the limiter told in settings, as an administrator who knew it would (`..._REQUESTS_PER_SECOND`",
    "at its rate; 0, no ceiling, for the windows of 10 s and a minute, whose allowance the floor",
    "spends at once; `MAX_CONCURRENCY` at the cap): where told misses the floor by as much as learned,",
    "the miss is the client's own cost (its start, each answer's way back, the chains of pages), not",
    "the rate control's.",
    "",
    table(
      [
        "scenario",
        "limiter",
        "wall s",
        "floor s",
        "wall / floor",
        "requests (429s)",
        "minimum",
        "req / min",
        "upstream span s (req/s)",
        "answer ms",
        "learned rate",
        "told: wall / floor (429s)",
        `wall / floor <= ${MATRIX_TARGETS.wallPerFloor.toFixed(2)}`,
        `req / min <= ${MATRIX_TARGETS.requestsPerMinimum}`,
      ],
      rows.map((r) => {
        const met = matrixTargetsMet(r);
        return [
          r.ok ? r.scenario : `${r.scenario} (failed)`,
          r.upstream,
          fixed(r.wallSeconds),
          fixed(r.floorSeconds, 2),
          fixed(r.wallPerFloor, 2),
          `${grouped(r.requests)} (${r.throttled})`,
          grouped(r.minimumRequests),
          fixed(r.requestsPerMinimum, 3),
          r.upstreamSpanSeconds === undefined
            ? "–"
            : `${fixed(r.upstreamSpanSeconds)} (${fixed(r.upstreamRate)})`,
          r.upstreamAnswerMs === undefined ? "–" : fixed(r.upstreamAnswerMs, 1),
          r.learnedRate ?? "–",
          toldCell(r),
          yesNo(met.wall),
          yesNo(met.requests),
        ];
      }),
    ),
  ];
}
