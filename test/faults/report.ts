/**
 * RELIABILITY.md from the cells the matrix's test files leave in .build/faults: the outcome per
 * fault over every connector, runtime and seed, the same per runtime, and what each fault does.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { FAULTS, RUNTIMES, type Runtime } from "./catalogue";
import type { CellResult } from "./matrix";

export async function readResults(dir: string): Promise<CellResult[]> {
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith(".json"));
  const cells: CellResult[] = [];
  for (const file of files.sort()) {
    cells.push(...(JSON.parse(await readFile(join(dir, file), "utf8")) as CellResult[]));
  }
  return cells;
}

interface Tally {
  runs: number;
  injected: number;
  exact: number;
  failed: number;
  lost: number;
  wrong: number;
  /** Failures whose reason did not name the cause, or that gave none. */
  unexplained: number;
}

function tally(cells: readonly CellResult[]): Tally {
  return {
    runs: cells.length,
    injected: cells.reduce((sum, c) => sum + (c.injected ?? 0), 0),
    exact: cells.filter((c) => c.verdict === "exact").length,
    failed: cells.filter((c) => c.verdict === "failed").length,
    lost: cells.reduce((sum, c) => sum + c.lost, 0),
    wrong: cells.filter((c) => c.verdict === "wrong").length,
    unexplained: cells.filter((c) => c.verdict === "vague" || c.verdict === "silent").length,
  };
}

const row = (cells: readonly (string | number)[]) => `| ${cells.join(" | ")} |`;

export function reliabilityReport(
  cells: readonly CellResult[],
  context: { date: string; node: string },
): string {
  const runtimes = RUNTIMES.filter((r) => cells.some((c) => c.runtime === r));
  const seeds = runtimes.map((runtime) => {
    const used = new Set(cells.filter((c) => c.runtime === runtime).map((c) => c.seed));
    return `${runtime} ${[...used].sort((a, b) => a - b).join(", ")}`;
  });
  const total = tally(cells);
  const lines = [
    "# Reliability: the fault matrix",
    "",
    "Written by `npm run test:faults` (test/faults): every fault below injected into the upstream",
    "simulators for each connector (BlackLine, Valimail) and each runtime (CLI: the local sync to",
    "`--out`; service: the built executable against the platform simulator; cloud: the packaged",
    "Lambdas on moto_server, workers and finalize fed from the real queues). Each fault is decided",
    "per request from a seed (`lib/simulators/faultSchedule.ts`: a request's fault is a function of",
    "the seed, its method and URL, and its attempt number), so a seed gives the same outcome on",
    "every run. A run counts as **exact** when it published a snapshot equal to the clean run's",
    "(records compared, sync ids and timestamps aside), and as **failed loudly** when it published",
    "nothing (CLI: `--out` unchanged; service: no upload and the label `error`; cloud: no upload",
    "and the run `error`) and its reason matches the fault's expected cause. Anything else is a",
    "defect and fails the matrix: a wrong snapshot published, records lost, or a failure that does",
    "not name its cause. `npm test` runs a bounded form (two seeds on the CLI, one on the service,",
    "seven cells on the cloud).",
    "",
    `Last full run: ${context.date}, Node ${context.node}; seeds: ${seeds.join("; ")}.`,
    `${total.runs} runs: ${total.exact} snapshots exact, ${total.failed} failed loudly, ${total.lost} records lost, ${total.wrong} wrong snapshots published, ${total.unexplained} failures without their cause.`,
    "",
    row([
      "fault",
      "runs",
      "requests faulted",
      "snapshots exact",
      "failed loudly",
      "records lost",
      "wrong snapshots published",
    ]),
    row(["---", "---:", "---:", "---:", "---:", "---:", "---:"]),
  ];
  for (const fault of FAULTS) {
    const t = tally(cells.filter((c) => c.fault === fault.id));
    if (t.runs === 0) continue;
    lines.push(row([fault.id, t.runs, t.injected, t.exact, t.failed, t.lost, t.wrong]));
  }
  lines.push(
    row([
      "**all**",
      total.runs,
      total.injected,
      total.exact,
      total.failed,
      total.lost,
      total.wrong,
    ]),
  );
  lines.push("", "By runtime (exact / failed loudly):", "");
  lines.push(row(["fault", ...runtimes]), row(["---", ...runtimes.map(() => "---:")]));
  for (const fault of FAULTS) {
    const byRuntime = runtimes.map((runtime: Runtime) => {
      const t = tally(cells.filter((c) => c.fault === fault.id && c.runtime === runtime));
      return t.runs === 0 ? "-" : `${t.exact} / ${t.failed}`;
    });
    if (byRuntime.some((cell) => cell !== "-")) lines.push(row([fault.id, ...byRuntime]));
  }
  lines.push("", "## What each fault does, and what the product does about it", "");
  for (const fault of FAULTS) {
    lines.push(`- **${fault.id}**: ${fault.injects}. The product ${fault.handling}.`);
  }
  lines.push(
    "",
    "## What the matrix found and what was fixed",
    "",
    "- Duplicates across pages lost BlackLine's last users: a list ended when the count of items",
    "  read reached `totalItems`, and repeated items inflate that count. A list now ends on a short",
    "  or empty page (`lib/sync/paging.ts`); a list whose last page is full costs one more request.",
    "- A user removed (or added) while the users list was read shifted every later page by one, so",
    "  another user was never served: the snapshot missed a user who existed throughout. The cursor",
    "  now keeps the list's first total, and a page with another total fails the run",
    "  (`ListChangedError`, `list_changed`): nothing is published, the next sync reads it again.",
    "- A complete answer whose JSON was cut off failed as `expected object, received string`; it now",
    "  says the body is not valid JSON (`lib/http/parseResponse.ts`).",
    "",
  );
  return `${lines.join("\n")}`;
}

export async function writeReliabilityReport(resultsDir: string, out: string): Promise<void> {
  const cells = await readResults(resultsDir);
  if (cells.length === 0) return;
  const date = new Date().toISOString().slice(0, 16).replace("T", " ");
  await writeFile(out, reliabilityReport(cells, { date: `${date} UTC`, node: process.version }));
}
