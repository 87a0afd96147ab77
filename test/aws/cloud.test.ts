// The cloud runtime end to end, on moto_server: instances registered with the operator commands,
// the scheduler, the sync workers fed from the real sync-jobs queue, finalize fed from the
// finalize queue, and the action function. moto cannot run Lambda code (no Docker engine here),
// so the harness runs the packaged handlers with the environment the deployed functions carry;
// the operator commands' Lambda invokes go to the same harness (the one part not exercised on
// AWS itself). Upstreams and the platform are the simulators, real HTTP servers on loopback.
// The removal guard's cases (guard.ts) run first, on the same stack.
import { availableParallelism } from "node:os";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { GetQueueAttributesCommand, PurgeQueueCommand, SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ActionReply } from "../../lib/actions";
import { InstanceRegistry, isDue, RunStore, type SweepAnswer } from "../../lib/cloud";
import { type BlacklineSimulator, startBlacklineSimulator } from "../../lib/simulators/blackline";
import { type PlatformSimulator, startPlatformSimulator } from "../../lib/simulators/platform";
import { startValimailSimulator, type ValimailSimulator } from "../../lib/simulators/valimail";
import { syncBlackline } from "../helpers/blackline";
import { canonicalRecords, type Line } from "../helpers/snapshot";
import { makeTempDir } from "../helpers/tempDir";
import { syncValimail } from "../helpers/valimail";
import { removalGuardCases } from "./guard";
import {
  alarmMetric,
  awsClientConfig,
  emittedMetrics,
  type Moto,
  metricKey,
  runOperator,
  type Stack,
  startStackOnMoto,
} from "./harness";
import { settingsFunctionCases } from "./settings";

let moto: Moto;
let stack: Stack;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  // The operator commands run in this process, against the emulator.
  ({ moto, stack } = await startStackOnMoto({ stage: "dev" }));
});

afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await stack?.close();
  await moto?.stop();
});

const operator = (argv: string[], env: Record<string, string> = {}) =>
  runOperator(stack, argv, env);

async function platform(): Promise<PlatformSimulator> {
  const sim = await startPlatformSimulator();
  closers.push(() => sim.close());
  return sim;
}

async function blackline(options: Parameters<typeof startBlacklineSimulator>[0]) {
  const sim = await startBlacklineSimulator(options);
  closers.push(() => sim.close());
  return sim;
}

/** Runs the queues the way Lambda would until the run is published or ended. */
async function runQueues(options: Parameters<Stack["drainQueue"]>[1] = {}) {
  const worker = await stack.drainQueue("syncWorker", options);
  const finalize = await stack.drainQueue("finalize");
  return { worker, finalize };
}

function snapshotOf(sim: PlatformSimulator, syncId: string): Line[] {
  const upload = sim.uploads.get(syncId);
  if (!upload?.text) throw new Error(`nothing was uploaded for ${syncId}`);
  return upload.text
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Line);
}

function startedSyncId(stdout: string): string {
  const answer = JSON.parse(stdout.trim().split("\n").at(-1) as string) as {
    syncId: string;
    status: string;
  };
  expect(answer.status).toBe("started");
  return answer.syncId;
}

// First: its metrics case reads every function's output since the deploy.
describe("the removal guard in the cloud runtime", () => {
  removalGuardCases(() => ({ moto, stack }));
});

describe("the settings function", () => {
  settingsFunctionCases(() => ({ moto, stack }), runQueues);
});

describe("a cloud sync", () => {
  /** 1,300 users: the size the closing note measures. */
  let upstream: BlacklineSimulator;
  /** Smaller, for the scenarios that deliver everything twice. */
  let small: BlacklineSimulator;

  beforeAll(async () => {
    upstream = await blackline({ seed: 13, size: { users: 1300, teams: 60, roles: 12 } });
    small = await blackline({ seed: 14, size: { users: 200, teams: 24, roles: 6 } });
  });

  it("of BlackLine uploads exactly what a local sync writes, with labels syncing then connected", async () => {
    const platformSim = await platform();
    const env = { ...upstream.env(), ...platformSim.env() };

    const put = await operator(["put-instance", "bl-prod", "blackline"], env);
    expect(put.stderr).toBe("");
    expect(put.code).toBe(0);
    const syncId = startedSyncId(put.stdout);
    const { worker, finalize } = await runQueues();

    const local = await syncBlackline(upstream, await makeTempDir());
    const lines = snapshotOf(platformSim, syncId);
    expect(canonicalRecords(lines)).toEqual(local.records);
    expect(lines[0]).toMatchObject({ kind: "sync_start", syncId, connector: "blackline" });
    expect(lines.at(-1)).toMatchObject({ kind: "sync_end", syncId, status: "complete" });
    expect(platformSim.uploads.get(syncId)?.accepted).toBe(1);
    expect(platformSim.labels.map((l) => l.label)).toEqual(["syncing", "connected"]);
    const row = await new InstanceRegistry(stack.outputs.InstancesTableName as string).get(
      "bl-prod",
    );
    expect(row).toMatchObject({
      label: "connected",
      lastSyncId: syncId,
      lastSyncStatus: "complete",
    });
    expect(row?.currentSyncId).toBeUndefined();
    // The packaged finalize made the shards ready in its worker threads, one a vCPU but its own.
    const completed = stack
      .logs("finalize")
      .map((l) => l.line)
      .find((line) => line.includes('"run complete"'));
    const vcpus = availableParallelism();
    expect(JSON.parse(completed ?? "{}")).toMatchObject({
      shardWorkers: vcpus > 1 ? vcpus - 1 : 0,
    });
    const run = await new RunStore(stack.outputs.RunsTableName as string).get(syncId);
    // What the closing note reports: one BlackLine cloud sync of 1,300 users.
    console.info(
      JSON.stringify({
        scenario: "blackline-1300-cloud",
        jobs: run?.jobsDone,
        upstreamRequests: run?.requests,
        workerInvocations: worker.invocations,
        workerMessages: worker.messages,
        workerHandlerMs: Math.round(worker.handlerMs),
        finalizeInvocations: finalize.invocations,
        finalizeHandlerMs: Math.round(finalize.handlerMs),
        records: lines.length,
      }),
    );
  });

  it("is not started twice for an instance, and `cloud sync` answers already_running", async () => {
    const platformSim = await platform();
    const env = { ...small.env(), ...platformSim.env() };
    await operator(["put-instance", "bl-twice", "blackline", "--no-sync"], env);

    const first = await operator(["sync", "bl-twice"]);
    const second = await operator(["sync", "bl-twice"]);

    const syncId = startedSyncId(first.stdout);
    expect(JSON.parse(second.stdout)).toEqual({
      connectorId: "bl-twice",
      syncId,
      status: "already_running",
    });
    await runQueues();
    expect([...platformSim.uploads.keys()]).toEqual([syncId]);
  });

  it("with every message delivered twice and a worker killed mid-batch is still exact, uploaded once", async () => {
    const clean = await platform();
    const env = {
      ...small.env(),
      ...clean.env(),
      CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0",
    };
    await operator(["put-instance", "bl-clean", "blackline", "--no-sync"], env);
    const cleanId = startedSyncId((await operator(["sync", "bl-clean"])).stdout);
    await runQueues();

    const faulty = await platform();
    await operator(["put-instance", "bl-faulty", "blackline", "--no-sync"], {
      ...env,
      ...faulty.env(),
    });
    const faultyId = startedSyncId((await operator(["sync", "bl-faulty"])).stdout);
    // Every upstream answer takes 200 ms, and a fresh container first fetches a token: the two
    // killed invocations are always cut off at 350 ms, after some of their batch's work and before
    // the end of it, whatever this machine's speed.
    small.faults = { latencyMs: 200 };
    const { worker } = await runQueues({
      duplicateEveryMessage: true,
      killAfter: { ms: 350, invocations: 2 },
    }).finally(() => {
      small.faults = {};
    });

    expect(worker.kills).toBe(2);
    expect(canonicalRecords(snapshotOf(faulty, faultyId))).toEqual(
      canonicalRecords(snapshotOf(clean, cleanId)),
    );
    expect(faulty.uploads.get(faultyId)?.accepted).toBe(1);
    const runs = new RunStore(stack.outputs.RunsTableName as string);
    const [cleanRun, faultyRun] = [await runs.get(cleanId), await runs.get(faultyId)];
    // Each job counted once, however often it was delivered.
    expect(faultyRun?.jobsDone).toBe(cleanRun?.jobsDone);
    expect(faultyRun?.status).toBe("complete");
  });

  it("holds the instance's request rate across concurrent workers (shared in DynamoDB)", async () => {
    const limited = await blackline({ seed: 15, size: { users: 200, teams: 24, roles: 6 } });
    const platformSim = await platform();
    const limit = 5;
    await operator(["put-instance", "bl-limited", "blackline", "--no-sync"], {
      ...limited.env(),
      ...platformSim.env(),
      CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: String(limit),
    });

    const syncId = startedSyncId((await operator(["sync", "bl-limited"])).stdout);
    // Two workers at once, as Lambda scales out: each alone would keep the limit.
    await Promise.all([stack.drainQueue("syncWorker"), stack.drainQueue("syncWorker")]);
    await stack.drainQueue("finalize");

    expect(platformSim.uploads.get(syncId)?.accepted).toBe(1);
    const arrivals = limited.stats.arrivals;
    const seconds = (arrivals.at(-1) as number) / 1000 - (arrivals[0] as number) / 1000;
    const perSecond = new Map<number, number>();
    for (const t of arrivals)
      perSecond.set(Math.floor(t / 1000), (perSecond.get(Math.floor(t / 1000)) ?? 0) + 1);
    console.info(
      JSON.stringify({
        scenario: "shared-rate",
        limit,
        requests: arrivals.length,
        seconds: Number(seconds.toFixed(2)),
        busiestSecond: Math.max(...perSecond.values()),
      }),
    );
    // Fixed one-second windows: n requests need at least n / limit - 1 whole seconds, and no
    // second of arrivals holds more than two windows' worth (a window's requests can land late).
    expect(seconds).toBeGreaterThanOrEqual(Math.floor(arrivals.length / limit) - 1);
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(2 * limit);
  });

  it("learns an upstream's limit with no rate configured, shared by concurrent workers", async () => {
    // Prepare: the upstream accepts 4 requests in any second; nothing is configured. (At 8 a
    // second, two workers on a machine at load 13 never reached it: no 429, nothing to learn.)
    const limited = await blackline({ seed: 16, size: { users: 200, teams: 24, roles: 6 } });
    limited.faults = { limit: { requestsPerSecond: 4 } };
    const platformSim = await platform();
    await operator(["put-instance", "bl-learned", "blackline", "--no-sync"], {
      ...limited.env(),
      ...platformSim.env(),
    });

    // Act: two workers at once; a refused job comes back with its Retry-After as a delay.
    const syncId = startedSyncId((await operator(["sync", "bl-learned"])).stdout);
    await Promise.all([stack.drainQueue("syncWorker"), stack.drainQueue("syncWorker")]);
    await stack.drainQueue("finalize");

    // Assess: complete; the shared limit was lowered from its start of 20 after the first 429s,
    // so the 429s stayed a minority of the requests.
    expect(platformSim.uploads.get(syncId)?.accepted).toBe(1);
    const { requests, throttled } = limited.stats;
    console.info(
      JSON.stringify({ scenario: "shared-learned-rate", limit: 4, requests, throttled }),
    );
    expect(throttled).toBeGreaterThan(0);
    expect(throttled).toBeLessThan(requests / 2);
    // `cloud runs` counts each request the upstream answered once, and each 429, on the run it
    // slowed: the requests of deliveries handed back for a 429 too (they were lost before).
    const runs = await operator(["runs", "bl-learned", "--json"]);
    const listed = runs.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(listed).toEqual([
      expect.objectContaining({ syncId, status: "complete", requests, upstream429s: throttled }),
    ]);
  });

  it("against an upstream that keeps failing ends error, its job in the dead-letter queue, nothing uploaded", async () => {
    const failing = await blackline({ seed: 4, size: { users: 50, teams: 5, roles: 3 } });
    const platformSim = await platform();
    await operator(["put-instance", "bl-down", "blackline", "--no-sync"], {
      ...failing.env(),
      ...platformSim.env(),
    });
    failing.faults = { serverErrors: { every: 1, burst: 1 } };

    const syncId = startedSyncId((await operator(["sync", "bl-down"])).stdout);
    await runQueues({ timeoutMs: 90_000 });

    expect(platformSim.uploads.size).toBe(0);
    expect(platformSim.labels.map((l) => l.label)).toEqual(["syncing", "error"]);
    expect(platformSim.labels.at(-1)?.detail).toMatch(
      /failed 5 times \(last: (GET|POST) .* answered 50\d.*dead-letter queue/,
    );
    const run = await new RunStore(stack.outputs.RunsTableName as string).get(syncId);
    expect(run?.status).toBe("error");
    const sqs = new SQSClient({ ...awsClientConfig(moto.endpoint), useQueueUrlAsEndpoint: false });
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: stack.outputs.SyncJobsDeadLetterQueueUrl,
        AttributeNames: ["ApproximateNumberOfMessages"],
      }),
    );
    sqs.destroy();
    expect(Number(Attributes?.ApproximateNumberOfMessages)).toBeGreaterThan(0);
    const list = await operator(["list"]);
    expect(list.stdout).toMatch(/bl-down\tblackline\terror \(.*failed 5 times/);
    // The run alarm's metric (moto skips alarms: the deployed template's) was emitted as it watches it.
    const emitted = emittedMetrics(stack.logs("syncWorker")).map(metricKey);
    expect(emitted).toContain(metricKey(alarmMetric(stack, "RunsFailedAlarm")));
  });

  it("of Valimail uploads exactly what a local sync writes", async () => {
    const valimail = await startValimailSimulator({ seed: 5, users: 240 });
    closers.push(() => valimail.close());
    const platformSim = await platform();

    const put = await operator(["put-instance", "vm-prod", "valimail"], {
      ...valimail.env(),
      ...platformSim.env(),
    });
    const syncId = startedSyncId(put.stdout);
    await runQueues();

    const local = await syncValimail(valimail, await makeTempDir());
    expect(canonicalRecords(snapshotOf(platformSim, syncId))).toEqual(local.records);
    expect(platformSim.labels.map((l) => l.label)).toEqual(["syncing", "connected"]);
  });
});

describe("the action function", () => {
  let valimail: ValimailSimulator;

  beforeAll(async () => {
    valimail = await startValimailSimulator({ seed: 8, users: 30 });
    closers.push(() => valimail.close());
    const platformSim = await platform();
    const env = {
      ...valimail.env(),
      ...platformSim.env(),
      CONNECTOR_EMAILAUTH_REQUESTS_PER_SECOND: "0",
    };
    await operator(["put-instance", "vm-write", "valimail", "--no-sync"], {
      ...env,
      CONNECTOR_PROVISIONING: "true",
    });
    await operator(["put-instance", "vm-read", "valimail", "--no-sync"], env);
  });

  const activeUser = () => [...valimail.users.values()].find((u) => u.active) as { id: string };
  const action = (request: unknown) =>
    stack.invokeByName(stack.outputs.ActionFunctionName as string, request) as Promise<ActionReply>;

  it("disables a user once per requestId: a repeat gets the first reply and writes nothing", async () => {
    const user = activeUser();
    const request = {
      requestId: "req-disable-1",
      connectorId: "vm-write",
      action: "disable_user",
      args: { user_id: user.id },
    };

    const first = await action(request);
    const patches = valimail.stats.byRoute.patch ?? 0;
    const again = await action(request);

    expect(first).toEqual({
      requestId: "req-disable-1",
      status: "succeeded",
      result: { user_id: user.id, active: false, changed: true },
    });
    expect(again).toEqual(first);
    expect(valimail.stats.byRoute.patch ?? 0).toBe(patches);
  });

  it("refuses writes when provisioning is off, and the same requestId for another request", async () => {
    const off = await action({
      requestId: "req-off",
      connectorId: "vm-read",
      action: "enable_user",
      args: { user_id: activeUser().id },
    });
    const reused = await action({
      requestId: "req-disable-1",
      connectorId: "vm-write",
      action: "enable_user",
      args: { user_id: activeUser().id },
    });

    expect(off).toMatchObject({
      status: "failed",
      error: { code: "provisioning_disabled", retryable: false },
    });
    expect(reused).toMatchObject({
      status: "failed",
      error: {
        code: "invalid_request",
        message: expect.stringMatching(/used before for a different request/),
      },
    });
  });

  it("answers a malformed request invalid_request, with no request upstream, and never throws", async () => {
    const before = valimail.stats.requests;

    const replies = await Promise.all(
      [
        { requestId: "m1", connectorId: "vm-write", action: "delete_everything", args: {} },
        { requestId: "m2", connectorId: "vm-write", action: "disable_user", args: {} },
        "not even an object",
        null,
      ].map(action),
    );

    for (const reply of replies) {
      expect(reply).toMatchObject({
        status: "failed",
        error: { code: "invalid_request", retryable: false },
      });
    }
    expect(replies.map((r) => r.requestId)).toEqual(["m1", "m2", "unknown", "unknown"]);
    expect(valimail.stats.requests).toBe(before);
  });

  it("does not remember a retryable failure: the platform's retry runs the action again", async () => {
    const user =
      [...valimail.users.values()].find((u) => u.active && u.id !== activeUser().id) ??
      activeUser();
    const request = {
      requestId: "req-retry",
      connectorId: "vm-write",
      action: "disable_user",
      args: { user_id: user.id },
    };
    valimail.faults = { rateLimit: { every: 1, retryAfter: "seconds", seconds: 600 } };
    const limited = await action(request);
    valimail.faults = {};
    const retried = await action(request);

    expect(limited).toMatchObject({
      status: "failed",
      error: { code: "rate_limited", retryable: true },
    });
    expect(retried).toMatchObject({
      status: "succeeded",
      result: { user_id: user.id, active: false },
    });
  });
});

describe("cloud put-instance", () => {
  it("with a configuration mistake exits 2 naming the variable, and writes nothing", async () => {
    const platformSim = await platform();
    const upstream = await blackline({ seed: 2, size: { users: 5, teams: 1, roles: 1 } });

    const run = await operator(["put-instance", "bl-typo", "blackline"], {
      ...upstream.env(),
      ...platformSim.env(),
      CONNECTOR_ACCOUNTING_ENVIRONMENT: "Acme Corp",
      CONNECTOR_ACCOUNTING_BASE_URL: "",
    });

    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /CONNECTOR_ACCOUNTING_ENVIRONMENT: "Acme Corp" is not a single DNS label/,
    );
    const list = await operator(["list", "--json"]);
    expect(list.stdout).not.toMatch(/bl-typo/);
    expect(upstream.stats.requests).toBe(0);
  });
});

describe("the scheduler", () => {
  const scheduled = { "detail-type": "Scheduled Event", source: "aws.events", detail: {} };

  it("on its schedule ends a run that made no progress, and nothing of it is uploaded", async () => {
    const upstream = await blackline({ seed: 6, size: { users: 40, teams: 4, roles: 2 } });
    const platformSim = await platform();
    await operator(["put-instance", "bl-stall", "blackline", "--no-sync"], {
      ...upstream.env(),
      ...platformSim.env(),
    });
    const syncId = startedSyncId((await operator(["sync", "bl-stall"])).stdout);
    // Its workers never run (a region outage, say): the run's last progress is long ago.
    const runsTable = stack.outputs.RunsTableName as string;
    const dynamo = DynamoDBDocumentClient.from(new DynamoDBClient(awsClientConfig(moto.endpoint)));
    await dynamo.send(
      new UpdateCommand({
        TableName: runsTable,
        Key: { pk: `run#${syncId}`, sk: "run" },
        UpdateExpression: "SET lastProgressAt = :old",
        ExpressionAttributeValues: { ":old": new Date(Date.now() - 3_600_000).toISOString() },
      }),
    );
    dynamo.destroy();

    const sweep = (await stack.invokeByName(
      stack.outputs.SchedulerFunctionName as string,
      scheduled,
    )) as SweepAnswer;
    const checked = await stack.drainQueue("scheduler");
    await runQueues();

    expect(sweep.checks).toContain("bl-stall");
    expect(checked.failedRecords).toBe(0);
    expect((await new RunStore(runsTable).get(syncId))?.status).toBe("error");
    expect(platformSim.uploads.size).toBe(0);
    expect(platformSim.labels.map((l) => l.label)).toEqual(["syncing", "error"]);
    expect(platformSim.labels.at(-1)?.detail).toMatch(/no progress for \d+ s \(limit 900 s\)/);
    const row = await new InstanceRegistry(stack.outputs.InstancesTableName as string).get(
      "bl-stall",
    );
    expect(row).toMatchObject({ label: "error", lastSyncStatus: "error" });
    expect(row?.currentSyncId).toBeUndefined();
  });

  it("hands a run whose finalizer died to a new finalizer, which publishes it", async () => {
    const upstream = await blackline({ seed: 9, size: { users: 30, teams: 3, roles: 2 } });
    const platformSim = await platform();
    await operator(["put-instance", "bl-lost-final", "blackline", "--no-sync"], {
      ...upstream.env(),
      ...platformSim.env(),
    });
    const syncId = startedSyncId((await operator(["sync", "bl-lost-final"])).stdout);
    await stack.drainQueue("syncWorker");
    // A finalizer took the run 25 minutes ago and died: its message is still invisible.
    const runsTable = stack.outputs.RunsTableName as string;
    const dynamo = DynamoDBDocumentClient.from(new DynamoDBClient(awsClientConfig(moto.endpoint)));
    await dynamo.send(
      new UpdateCommand({
        TableName: runsTable,
        Key: { pk: `run#${syncId}`, sk: "run" },
        UpdateExpression:
          "SET #status = :finalizing, finalizeLeaseAt = :old, finalizeAttempts = :one",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: {
          ":finalizing": "finalizing",
          ":old": new Date(Date.now() - 25 * 60_000).toISOString(),
          ":one": 1,
        },
      }),
    );
    dynamo.destroy();
    // The dead finalizer's message is gone with it.
    const sqs = new SQSClient({ ...awsClientConfig(moto.endpoint), useQueueUrlAsEndpoint: false });
    await sqs.send(new PurgeQueueCommand({ QueueUrl: stack.outputs.FinalizeQueueUrl }));
    sqs.destroy();

    await stack.invokeByName(stack.outputs.SchedulerFunctionName as string, scheduled);
    await stack.drainQueue("scheduler");
    await stack.drainQueue("finalize");

    expect((await new RunStore(runsTable).get(syncId))?.status).toBe("complete");
    expect(platformSim.uploads.get(syncId)?.accepted).toBe(1);
    expect(platformSim.labels.map((l) => l.label)).toEqual(["syncing", "connected"]);
  });

  it("on its schedule starts the instances that are due, and only those", async () => {
    const upstream = await blackline({ seed: 7, size: { users: 20, teams: 2, roles: 2 } });
    const env = { ...upstream.env(), ...(await platform()).env() };
    await operator(["put-instance", "bl-synced", "blackline"], env);
    await runQueues();
    await operator(["put-instance", "bl-new", "blackline", "--no-sync"], env);
    const registry = new InstanceRegistry(stack.outputs.InstancesTableName as string);
    const before = new Map((await registry.list()).map((r) => [r.connectorId, r]));

    const sweep = (await stack.invokeByName(
      stack.outputs.SchedulerFunctionName as string,
      scheduled,
    )) as SweepAnswer;
    await stack.drainQueue("scheduler");
    await runQueues();

    const due = [...before.values()]
      .filter((row) => isDue(row, new Date()))
      .map((row) => row.connectorId)
      .sort();
    expect([...sweep.starts].sort()).toEqual(due);
    // Synced within its interval: not due. Never completed a sync: due, and its checks start it.
    expect(sweep.starts).toContain("bl-new");
    expect(sweep.starts).not.toContain("bl-synced");
    expect(await registry.get("bl-new")).toMatchObject({ lastSyncStatus: "complete" });
    expect((await registry.get("bl-synced"))?.lastSyncId).toBe(before.get("bl-synced")?.lastSyncId);
  });
});
