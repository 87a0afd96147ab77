// The fault matrix on the cloud runtime, on moto_server: each cell is an instance registered with
// `cloud put-instance` (its upstream a faulty simulator, its platform a simulator of its own), a
// sync started with `cloud sync`, the sync workers fed from the real sync-jobs queue and finalize
// from the finalize queue, as test/aws/cloud.test.ts runs them. The cells of a round share the
// queues, as a stage's instances do. `npm test` runs a representative subset with one seed;
// `npm run test:faults` runs every fault with five.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunStore } from "../../lib/cloud";
import { type PlatformSimulator, startPlatformSimulator } from "../../lib/simulators/platform";
import { awsEnv, deployStack, type Moto, runOperator, type Stack, startMoto } from "../aws/harness";
import { CONNECTORS, type ConnectorName, FAULTS, type FaultCase } from "./catalogue";
import {
  type CellResult,
  cleanSnapshot,
  platformOutcome,
  problem,
  result,
  startUpstream,
  type Upstream,
  unexercised,
  upstreamEnv,
} from "./matrix";
import { saveResults } from "./results";
import { seedsFor, selectFaults } from "./seeds";

/**
 * The cloud's cells in `npm test`: one of each way a run ends (waited out, retried, failed on
 * the body, on paging, on a change), each with one connector, so that the bounded form stays
 * within one round of the queues.
 */
const BOUNDED: ReadonlyMap<string, ConnectorName> = new Map([
  ["429 storm, Retry-After", "blackline"],
  ["5xx bursts", "valimail"],
  ["body cut off", "valimail"],
  ["schema: null list", "blackline"],
  ["duplicates across pages", "blackline"],
  ["alternating pages", "valimail"],
  ["user removed mid-sync", "blackline"],
]);
/** Instances synced at once in one round of the queues. */
const ROUND = 12;

let moto: Moto;
let stack: Stack;

beforeAll(async () => {
  moto = await startMoto();
  stack = await deployStack(moto, { stage: "dev" });
  Object.assign(process.env, awsEnv(moto.endpoint));
});

afterAll(async () => {
  await stack?.close();
  await moto?.stop();
});

const operator = (argv: string[], env: Record<string, string> = {}) =>
  runOperator(stack, argv, env);

interface CloudCell {
  fault: FaultCase;
  connector: ConnectorName;
  seed: number;
  connectorId: string;
  upstream: Upstream;
  platform: PlatformSimulator;
  syncId: string;
  startedAt: number;
}

let nextId = 0;

async function start(fault: FaultCase, connector: ConnectorName, seed: number) {
  const upstream = await startUpstream(connector);
  const platform = await startPlatformSimulator();
  const connectorId = `faults-${++nextId}`;
  const put = await operator(["put-instance", connectorId, connector, "--no-sync"], {
    ...upstreamEnv(connector, upstream),
    ...platform.env(),
  });
  if (put.code !== 0) throw new Error(`put-instance ${connectorId}: ${put.stderr}`);
  // The faults start with the sync, not with put-instance's checks.
  upstream.faults = fault.settings(seed);
  const sync = await operator(["sync", connectorId]);
  const answer = JSON.parse(sync.stdout.trim().split("\n").at(-1) ?? "{}") as { syncId?: string };
  if (!answer.syncId) throw new Error(`cloud sync ${connectorId}: ${sync.stdout}${sync.stderr}`);
  const cell: CloudCell = {
    fault,
    connector,
    seed,
    connectorId,
    upstream,
    platform,
    syncId: answer.syncId,
    startedAt: Date.now(),
  };
  return cell;
}

/** Starts a round of cells, runs the queues until they are empty, and judges each run. */
async function round(cells: readonly CloudCell[]): Promise<CellResult[]> {
  const runs = new RunStore(stack.outputs.RunsTableName as string);
  const drain = { maxInvocations: 5_000, timeoutMs: 480_000 };
  // Lambda runs several workers at once; a worker waiting out a backoff holds only its batch.
  await Promise.all(Array.from({ length: 3 }, () => stack.drainQueue("syncWorker", drain)));
  await stack.drainQueue("finalize", drain);
  const results: CellResult[] = [];
  for (const cell of cells) {
    const run = await runs.get(cell.syncId);
    const outcome =
      run?.status === "complete" || run?.status === "error"
        ? platformOutcome(cell.platform, run.status === "error")
        : { broken: `the run did not end (status ${run?.status})` };
    const injected = cell.upstream.stats.faulted;
    const { records } = await cleanSnapshot(cell.connector);
    results.push(
      result(
        cell.fault,
        cell.connector,
        "cloud",
        cell.seed,
        { ...outcome, injected },
        records,
        Date.now() - cell.startedAt,
      ),
    );
    await Promise.all([cell.upstream.close(), cell.platform.close()]);
  }
  return results;
}

describe("the fault matrix: cloud", () => {
  it("every fault (npm test: a subset), both connectors: exact or failed loudly with the cause, nothing wrong published", async () => {
    const full = process.env.FAULT_MATRIX === "full";
    const plan = selectFaults(FAULTS).flatMap((fault) =>
      CONNECTORS.filter((connector) => full || BOUNDED.get(fault.id) === connector).flatMap(
        (connector) => seedsFor("cloud").map((seed) => ({ fault, connector, seed })),
      ),
    );
    const cells: CellResult[] = [];
    for (let i = 0; i < plan.length; i += ROUND) {
      const started: CloudCell[] = [];
      for (const { fault, connector, seed } of plan.slice(i, i + ROUND)) {
        started.push(await start(fault, connector, seed));
      }
      cells.push(...(await round(started)));
    }
    await saveResults("cloud", cells);

    expect(cells.map(problem).filter((p) => p !== undefined)).toEqual([]);
    expect(cells.reduce((sum, cell) => sum + cell.lost, 0)).toBe(0);
    expect(unexercised(cells)).toEqual([]);
  }, 1_800_000);
});
