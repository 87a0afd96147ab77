/**
 * The fault matrix's runs and their judgement: each cell is one fault, one connector, one runtime
 * and one seed, against fresh simulators. A run ends either with a snapshot published (compared
 * with the clean run's records, sync ids and timestamps aside) or with nothing published and a
 * reason; `judge` sorts it into exact, failed loudly, or a defect (a wrong snapshot published,
 * records lost, a failure that does not name its cause, or a silent failure).
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectorNamed } from "../../lib/connectors";
import { newRequestContext } from "../../lib/http";
import { type BlacklineSimulator, startBlacklineSimulator } from "../../lib/simulators/blackline";
import type { FaultSettings } from "../../lib/simulators/faults";
import { type PlatformSimulator, startPlatformSimulator } from "../../lib/simulators/platform";
import { startValimailSimulator, type ValimailSimulator } from "../../lib/simulators/valimail";
import { runLocalSync } from "../../lib/sync";
import { FAST_RETRY } from "../helpers/blackline";
import { canonicalRecords, type Line, readSnapshot } from "../helpers/snapshot";
import { ServiceProcess } from "../service/harness";
import {
  type ConnectorName,
  type Expectation,
  FAULTS,
  type FaultCase,
  REQUEST_TIMEOUT_MS,
  RESPONSE_CAP_BYTES,
  type Runtime,
} from "./catalogue";

/** Small tenants read in many short pages, so that paging faults have pages to act on. */
export const PAGE_SIZE = 7;
const BLACKLINE = { seed: 21, size: { users: 60, teams: 6, roles: 4 } };
const VALIMAIL = { seed: 22, users: 60 };

export type Upstream = BlacklineSimulator | ValimailSimulator;

export async function startUpstream(
  connector: ConnectorName,
  faults: FaultSettings = {},
): Promise<Upstream> {
  return connector === "blackline"
    ? startBlacklineSimulator({ ...BLACKLINE, faults })
    : startValimailSimulator({ ...VALIMAIL, faults });
}

/**
 * The connector's variables, the same in every runtime: the simulator, no client-side rate limit,
 * small pages, and the per-request timeout and response size cap the faults are measured against.
 */
export function upstreamEnv(connector: ConnectorName, upstream: Upstream): Record<string, string> {
  const prefix = connector === "blackline" ? "CONNECTOR_ACCOUNTING" : "CONNECTOR_EMAILAUTH";
  return {
    ...upstream.env(),
    [`${prefix}_REQUESTS_PER_SECOND`]: "0",
    [`${prefix}_PAGE_SIZE`]: String(PAGE_SIZE),
    [`${prefix}_REQUEST_TIMEOUT`]: `${REQUEST_TIMEOUT_MS}ms`,
    [`${prefix}_MAX_RESPONSE_MIB`]: String(RESPONSE_CAP_BYTES / 2 ** 20),
  };
}

/** How a run ended, as its runtime shows it. */
export interface RunOutcome {
  /** The records of the snapshot the run published (written to --out, or uploaded). */
  published?: string[];
  /** Why it failed: the error (CLI), the `error` label's detail (service, cloud). */
  reason?: string;
  /** Something was published although the run failed, or a failed run left no `error` label. */
  broken?: string;
}

/** An outcome and how many answers the fault changed (from the simulator's count). */
export interface FaultedOutcome extends RunOutcome {
  injected: number;
}

export type Verdict = "exact" | "failed" | "wrong" | "vague" | "silent";

export interface CellResult {
  fault: string;
  connector: ConnectorName;
  runtime: Runtime;
  seed: number;
  verdict: Verdict;
  expected: Expectation;
  /** Clean records missing from a published snapshot. */
  lost: number;
  /** Requests the fault hit (pages or data, for page and data faults). */
  injected: number;
  reason?: string;
  ms: number;
}

/** Sorts an outcome against the clean records and the fault's reason pattern. */
export function judge(
  fault: FaultCase,
  clean: readonly string[],
  outcome: RunOutcome,
): { verdict: Verdict; lost: number } {
  if (outcome.published) {
    const published = new Set(outcome.published);
    const lost = clean.filter((record) => !published.has(record)).length;
    const same = lost === 0 && published.size === clean.length;
    return { verdict: same && !outcome.broken ? "exact" : "wrong", lost };
  }
  if (outcome.broken) return { verdict: "wrong", lost: 0 };
  if (!outcome.reason) return { verdict: "silent", lost: 0 };
  return { verdict: fault.reason.test(outcome.reason) ? "failed" : "vague", lost: 0 };
}

const clean = new Map<ConnectorName, Promise<{ records: string[]; text: string }>>();

/** The clean run's snapshot of each connector's tenant (a CLI sync without faults), computed once. */
export function cleanSnapshot(connector: ConnectorName) {
  const known = clean.get(connector) ?? cleanRun(connector);
  clean.set(connector, known);
  return known;
}

async function cleanRun(connector: ConnectorName) {
  const upstream = await startUpstream(connector);
  const dir = await mkdtemp(join(tmpdir(), "ac-faults-clean-"));
  try {
    const outFile = join(dir, "clean.jsonl");
    await localSync(connector, upstream, outFile);
    return {
      records: canonicalRecords(await readSnapshot(outFile)),
      text: await readFile(outFile, "utf8"),
    };
  } finally {
    await upstream.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The CLI's sync (runLocalSync, as `access-connectors sync --out` runs it), with short waits. */
async function localSync(connector: ConnectorName, upstream: Upstream, outFile: string) {
  const { connector: sync, concurrency } = connectorNamed(connector).sync(
    upstreamEnv(connector, upstream),
    { retry: FAST_RETRY },
  );
  const { summary } = await runLocalSync({
    connector: sync,
    outFile,
    concurrency,
    ctx: newRequestContext(),
  });
  return summary;
}

/**
 * CLI: `--out` already holds the clean snapshot (the previous sync's). A success replaces it; a
 * failure must leave it byte for byte.
 */
export async function runCli(
  fault: FaultCase,
  connector: ConnectorName,
  seed: number,
): Promise<FaultedOutcome> {
  const previous = (await cleanSnapshot(connector)).text;
  const upstream = await startUpstream(connector, fault.settings(seed));
  const dir = await mkdtemp(join(tmpdir(), "ac-faults-cli-"));
  const outFile = join(dir, `${connector}.sync.jsonl`);
  await writeFile(outFile, previous);
  try {
    await localSync(connector, upstream, outFile);
    const published = canonicalRecords(await readSnapshot(outFile));
    return { published, injected: upstream.stats.faulted };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const after = await readFile(outFile, "utf8");
    const injected = upstream.stats.faulted;
    return after === previous
      ? { reason, injected }
      : { reason, broken: "--out was changed by a failed sync", injected };
  } finally {
    await upstream.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The records of an uploaded snapshot's text. */
export function uploadedRecords(text: string | undefined): string[] {
  const lines = (text ?? "")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Line);
  return canonicalRecords(lines);
}

/**
 * The platform's view of one sync: the upload accepted for it (a snapshot published) or the
 * `error` label with its reason (nothing may have been uploaded then).
 */
export function platformOutcome(platform: PlatformSimulator, failed: boolean): RunOutcome {
  const accepted = [...platform.uploads.values()].filter((upload) => upload.accepted > 0);
  const last = platform.labels.at(-1);
  if (!failed) {
    if (accepted.length !== 1 || last?.label !== "connected") {
      return { broken: `uploads ${accepted.length}, last label ${last?.label}` };
    }
    return { published: uploadedRecords(accepted[0]?.text) };
  }
  const reason = last?.label === "error" ? (last.detail ?? "") : undefined;
  if (accepted.length > 0) {
    return {
      published: uploadedRecords(accepted[0]?.text),
      broken: "uploaded by a failed run",
      ...(reason === undefined ? {} : { reason }),
    };
  }
  return reason === undefined ? {} : { reason };
}

/**
 * Service: the built executable, as the container runs it, against the platform simulator. Its
 * sync at start ends with the label `connected` (after the upload) or `error`; then it is stopped.
 */
export async function runService(
  fault: FaultCase,
  connector: ConnectorName,
  seed: number,
): Promise<FaultedOutcome> {
  const upstream = await startUpstream(connector, fault.settings(seed));
  const platform = await startPlatformSimulator({ pollIntervalSeconds: 1 });
  const stateDir = await mkdtemp(join(tmpdir(), "ac-faults-service-"));
  const service = new ServiceProcess([connector], {
    ...upstreamEnv(connector, upstream),
    ...platform.env("host-1"),
    HOME: stateDir,
    CONNECTOR_STATE_DIR: stateDir,
    CONNECTOR_SYNC_INTERVAL: "1h",
  });
  try {
    const ended = await waitForLabel(platform, service);
    return { ...platformOutcome(platform, ended === "error"), injected: upstream.stats.faulted };
  } finally {
    if (service.running) await service.stop("SIGTERM");
    await Promise.all([upstream.close(), platform.close()]);
    await rm(stateDir, { recursive: true, force: true });
  }
}

const SERVICE_SYNC_LIMIT_MS = 90_000;

async function waitForLabel(platform: PlatformSimulator, service: ServiceProcess) {
  const deadline = Date.now() + SERVICE_SYNC_LIMIT_MS;
  for (;;) {
    const last = platform.labels.at(-1)?.label;
    if (last === "connected" || last === "error") return last;
    if (!service.running) {
      throw new Error(`the service exited before its sync ended: ${service.stderr.slice(-500)}`);
    }
    if (Date.now() > deadline) throw new Error("the service's sync did not end within 90 s");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** One cell: runs it and judges it. */
export async function runCell(
  runtime: "cli" | "service",
  fault: FaultCase,
  connector: ConnectorName,
  seed: number,
): Promise<CellResult> {
  const startedAt = Date.now();
  const outcome = await (runtime === "cli" ? runCli : runService)(fault, connector, seed);
  const { records } = await cleanSnapshot(connector);
  return result(fault, connector, runtime, seed, outcome, records, Date.now() - startedAt);
}

export function result(
  fault: FaultCase,
  connector: ConnectorName,
  runtime: Runtime,
  seed: number,
  outcome: FaultedOutcome,
  clean: readonly string[],
  ms: number,
): CellResult {
  const { verdict, lost } = judge(fault, clean, outcome);
  return {
    fault: fault.id,
    connector,
    runtime,
    seed,
    verdict,
    expected: fault.expect[runtime],
    lost,
    injected: outcome.injected,
    ...(outcome.reason === undefined ? {} : { reason: outcome.reason }),
    ...(outcome.broken === undefined ? {} : { reason: `${outcome.broken}; ${outcome.reason}` }),
    ms,
  };
}

/** Why a cell's result is not acceptable, or undefined when it is. */
export function problem(cell: CellResult): string | undefined {
  const where = `${cell.fault} / ${cell.connector} / ${cell.runtime} / seed ${cell.seed}`;
  if (cell.verdict === "wrong") {
    return `${where}: a wrong snapshot was published (${cell.lost} records lost): ${cell.reason ?? ""}`;
  }
  if (cell.verdict === "silent") return `${where}: failed without a reason`;
  if (cell.verdict === "vague") {
    return `${where}: the failure does not name the fault's cause: ${cell.reason}`;
  }
  if (cell.expected !== "either" && cell.verdict !== cell.expected) {
    return `${where}: expected ${cell.expected}, got ${cell.verdict}: ${cell.reason ?? ""}`;
  }
  return undefined;
}

/** Each fault and runtime whose runs injected nothing (the fault was never exercised). */
export function unexercised(cells: readonly CellResult[]): string[] {
  const injected = new Map<string, number>();
  for (const cell of cells) {
    const key = `${cell.fault} / ${cell.runtime}`;
    injected.set(key, (injected.get(key) ?? 0) + cell.injected);
  }
  return [...injected].filter(([, n]) => n === 0).map(([key]) => key);
}

/** Runs `tasks` with at most `limit` at once, in order of the list. */
export async function pool<T>(limit: number, tasks: readonly (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await (tasks[index] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

export { FAULTS };
