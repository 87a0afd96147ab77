// Tenants on one stage: a large instance's backlog does not hold up a small one's run (each job
// message carries its instance as MessageGroupId, which makes the standard sync-jobs queue a fair
// queue; the harness's moto orders receives as SQS fair queues do), a job refused for a rate limit
// goes back to the queue with a delay that grows with its refusals, an instance's jobs beyond its
// cap go back with a delay instead of holding workers, and a run's stall clock moves while its jobs
// move (a heartbeat), not only when one commits. On moto_server, with the packaged handlers run by
// the harness at the mapping's concurrency (10 workers; 4 where a backlog must form).
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { SQSRecord } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { RunStore } from "../../lib/cloud";
import { JobSlots } from "../../lib/cloud/aws/jobSlots";
import { startBlacklineSimulator } from "../../lib/simulators/blackline";
import { startPlatformSimulator } from "../../lib/simulators/platform";
import { parseJob } from "../../lib/sync";
import { awsClientConfig, type Moto, runOperator, type Stack, startStackOnMoto } from "./harness";

let moto: Moto;
let stack: Stack;
let sqs: SQSClient;
let runs: RunStore;
let dynamo: DynamoDBDocumentClient;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  ({ moto, stack } = await startStackOnMoto({ stage: "dev" }));
  sqs = new SQSClient({ ...awsClientConfig(moto.endpoint), useQueueUrlAsEndpoint: false });
  runs = new RunStore(stack.outputs.RunsTableName as string);
  dynamo = DynamoDBDocumentClient.from(new DynamoDBClient(awsClientConfig(moto.endpoint)));
});

afterAll(async () => {
  for (const close of closers.reverse()) await close();
  sqs?.destroy();
  dynamo?.destroy();
  await stack?.close();
  await moto?.stop();
});

/** An instance of BlackLine with its own upstream and platform, registered without a sync. */
async function instance(
  connectorId: string,
  options: Parameters<typeof startBlacklineSimulator>[0],
  settings: Record<string, string> = {},
) {
  const upstream = await startBlacklineSimulator(options);
  const platform = await startPlatformSimulator();
  closers.push(
    () => upstream.close(),
    () => platform.close(),
  );
  const put = await runOperator(stack, ["put-instance", connectorId, "blackline", "--no-sync"], {
    ...upstream.env(),
    ...platform.env(),
    ...settings,
  });
  expect(put.code).toBe(0);
  return { upstream, platform };
}

/** Sets the workers' cap of one run's jobs in flight for the test (the stage's default after). */
async function capJobsInFlight(cap: number) {
  await stack.updateEnvironment("syncWorker", { INSTANCE_JOBS_IN_FLIGHT: String(cap) });
  onTestFinished(() =>
    stack.updateEnvironment("syncWorker", { INSTANCE_JOBS_IN_FLIGHT: undefined }),
  );
}

/** The run's jobs held in the runs table for a free slot. */
async function heldJobs(syncId: string): Promise<number> {
  const { Count = 0 } = await dynamo.send(
    new QueryCommand({
      TableName: stack.outputs.RunsTableName as string,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :held)",
      ExpressionAttributeValues: { ":pk": `run#${syncId}`, ":held": "held#" },
      ConsistentRead: true,
    }),
  );
  return Count;
}

async function startSync(connectorId: string): Promise<string> {
  const { stdout } = await runOperator(stack, ["sync", connectorId]);
  const answer = JSON.parse(stdout.trim().split("\n").at(-1) as string) as { syncId: string };
  return answer.syncId;
}

/**
 * A small tenant's instance with no shared rate (`REQUESTS_PER_SECOND` 0), its sync started, and
 * its plan job taken off the queue (the root jobs' other message left received).
 */
async function unpacedPlan(connectorId: string, seed: number) {
  const { upstream } = await instance(
    connectorId,
    { seed, size: { users: 20, teams: 2, roles: 2 } },
    { CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0" },
  );
  const syncId = await startSync(connectorId);
  const [plan] = (await receiveRecords(2)).filter((r) => r.body.includes('"plan"'));
  if (!plan) throw new Error("no plan job on the queue");
  return { upstream, syncId, plan };
}

/** Receives the queue's messages (all of them, up to `count`) as the records of an SQS event. */
async function receiveRecords(count: number): Promise<SQSRecord[]> {
  const messages: Message[] = [];
  while (messages.length < count) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: stack.outputs.SyncJobsQueueUrl,
        MaxNumberOfMessages: 10,
        MessageSystemAttributeNames: ["All"],
        MessageAttributeNames: ["All"],
      }),
    );
    if (Messages.length === 0) break;
    messages.push(...Messages);
  }
  const mapping = stack.functions.syncWorker?.queues[0];
  return messages.map(
    (m) =>
      ({
        messageId: m.MessageId,
        receiptHandle: m.ReceiptHandle,
        body: m.Body,
        attributes: m.Attributes,
        messageAttributes: Object.fromEntries(
          Object.entries(m.MessageAttributes ?? {}).map(([name, value]) => [
            name,
            { dataType: value.DataType, stringValue: value.StringValue },
          ]),
        ),
        md5OfBody: m.MD5OfBody,
        eventSource: "aws:sqs",
        eventSourceARN: mapping?.queueArn,
        awsRegion: stack.region,
      }) as SQSRecord,
  );
}

/** Deletes a received message, as the mapping does after its invocation succeeded. */
async function deleteMessage(record: SQSRecord) {
  await sqs.send(
    new DeleteMessageCommand({
      QueueUrl: stack.outputs.SyncJobsQueueUrl,
      ReceiptHandle: record.receiptHandle,
    }),
  );
}

describe("two tenants at once", () => {
  it("a small instance's jobs are received before a large instance's backlog", async () => {
    // Prepare: a large tenant whose first page of 900 teams fans out into 18 membership jobs
    // (groups of 50 teams, docs/cloud.md "Jobs"), so with four workers (one job each: the
    // mapping's batch size is 1) most of them wait on the queue while the small run starts; and a
    // small one of a handful of jobs. No client-side rate, so no shared-rate writes slow moto.
    // The instances' cap of jobs in flight is lifted, so the large run's jobs wait on the queue.
    await instance(
      "large",
      { seed: 21, size: { users: 900, teams: 900, roles: 4 } },
      { CONNECTOR_ACCOUNTING_PAGE_SIZE: "2000", CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0" },
    );
    const small = await instance("small", { seed: 22, size: { users: 50, teams: 5, roles: 2 } });
    await capJobsInFlight(100);
    const largeId = await startSync("large");

    // Act: four workers run, noting each job as they receive it; once 10 of the large run's jobs
    // wait on the queue, the small run starts.
    const received: { syncId: string; sentAt: number; at: number }[] = [];
    const onBatch = (records: SQSRecord[]) => {
      const at = Date.now();
      for (const r of records) {
        const { syncId } = JSON.parse(r.body) as { syncId: string };
        received.push({ syncId, sentAt: Number(r.attributes.SentTimestamp), at });
      }
    };
    const worker = stack.drainQueue("syncWorker", {
      maxInvocations: 1_000,
      concurrency: 4,
      onBatch,
    });
    let backlog = 0;
    while (backlog < 10) {
      const { Attributes = {} } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: stack.outputs.SyncJobsQueueUrl,
          AttributeNames: ["ApproximateNumberOfMessages"],
        }),
      );
      backlog = Number(Attributes.ApproximateNumberOfMessages);
      await new Promise((r) => setTimeout(r, 50));
    }
    const smallId = await startSync("small");
    const { peakConcurrency } = await worker;
    await stack.drainQueue("finalize");

    // Assess: both published. Each job of the small run was received at the next receive after it
    // was sent (at most one a worker was making meanwhile), ahead of the large run's jobs already
    // waiting: the large run holds all the workers' processing time, so SQS's fair queue hands out
    // the other tenant's jobs first (the harness's moto models it: harness/moto_server.py).
    expect((await runs.get(largeId))?.status).toBe("complete");
    expect((await runs.get(smallId))?.status).toBe("complete");
    expect(small.platform.uploads.get(smallId)?.accepted).toBe(1);
    expect(peakConcurrency).toBe(4);
    const smallJobs = received.filter((r) => r.syncId === smallId);
    const overtaken = smallJobs.map(
      (job) =>
        received.filter((r) => r.syncId === largeId && r.at > job.sentAt && r.at < job.at).length,
    );
    const largeWaiting = smallJobs.map(
      (job) =>
        received.filter((r) => r.syncId === largeId && r.sentAt < job.sentAt && r.at > job.at)
          .length,
    );
    console.info(JSON.stringify({ scenario: "fair-queue", backlog, overtaken, largeWaiting }));
    // Its plan, its roles and its one membership group.
    expect(smallJobs.length).toBeGreaterThanOrEqual(3);
    // In the queue's order each would wait behind the 10 or more waiting before it.
    expect(Math.max(...overtaken)).toBeLessThanOrEqual(4);
    // And the large run's jobs did wait behind them: many were sent earlier and received later.
    expect(Math.max(...largeWaiting)).toBeGreaterThan(5);
  });

  it("an instance runs at most its cap of jobs at once: a job beyond it waits in the runs table, holding no worker", async () => {
    // Prepare: an instance capped at one job in flight, behind an upstream slow enough (300 ms an
    // answer) that its first root job still runs when the second is received.
    const { platform } = await instance("capped", {
      seed: 25,
      size: { users: 30, teams: 3, roles: 2 },
      faults: { latencyMs: 300 },
    });
    await capJobsInFlight(1);
    const syncId = await startSync("capped");

    // Act: two workers take its two root jobs at once.
    const drained = await stack.drainQueue("syncWorker", { concurrency: 2 });
    await stack.drainQueue("finalize");

    // Assess: one of them was held instead of waiting for the slot (one more delivery than jobs),
    // released when the slot freed, and the run is exact all the same: each job committed once.
    const held = stack
      .logs("syncWorker")
      .filter(({ line }) => line.includes("cap of jobs in flight") && line.includes(syncId));
    expect(held.length).toBeGreaterThanOrEqual(1);
    const run = await runs.get(syncId);
    expect(run?.status).toBe("complete");
    expect(run?.jobsDone).toBe(3);
    expect(drained.invocations).toBe(3 + held.length);
    expect(await heldJobs(syncId)).toBe(0);
    expect(platform.uploads.get(syncId)?.accepted).toBe(1);
  });

  it("a run's jobs beyond its free slots wait in the runs table, not on the queue", async () => {
    // Prepare: the large tenant's shape again (its plan asks for 18 membership jobs at once), capped
    // at 2 jobs in flight, with 3 workers.
    const { platform } = await instance(
      "fanout",
      { seed: 26, size: { users: 900, teams: 900, roles: 4 } },
      { CONNECTOR_ACCOUNTING_PAGE_SIZE: "2000", CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0" },
    );
    await capJobsInFlight(2);
    const syncId = await startSync("fanout");

    // Act: the workers drain the queue while the test notes how many of its messages it holds.
    let draining = true;
    let mostOnQueue = 0;
    const sampling = (async () => {
      while (draining) {
        const { Attributes: a = {} } = await sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: stack.outputs.SyncJobsQueueUrl,
            AttributeNames: [
              "ApproximateNumberOfMessages",
              "ApproximateNumberOfMessagesNotVisible",
            ],
          }),
        );
        const onQueue =
          Number(a.ApproximateNumberOfMessages) + Number(a.ApproximateNumberOfMessagesNotVisible);
        mostOnQueue = Math.max(mostOnQueue, onQueue);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const drained = await stack.drainQueue("syncWorker", { concurrency: 3 }).finally(() => {
      draining = false;
    });
    await sampling;
    await stack.drainQueue("finalize");

    // Assess: exact, nothing left held, and the queue never held the 18 children at once: each
    // message was sent into a slot reserved for it (at most 2), or is a delivery being held (at most
    // one a worker). Every delivery is a job committed, a job held (received with no slot free),
    // or a copy that found its job done (two workers released it at once).
    const run = await runs.get(syncId);
    expect(run?.status).toBe("complete");
    expect(platform.uploads.get(syncId)?.accepted).toBe(1);
    expect(await heldJobs(syncId)).toBe(0);
    const lines = stack
      .logs("syncWorker")
      .map(({ line }) => line)
      .filter((line) => line.includes(syncId));
    const heldDeliveries = lines.filter((line) => line.includes("cap of jobs in flight")).length;
    const copies = lines.filter(
      (line) => line.includes("job already done") || line.includes('"outcome":"already_done"'),
    ).length;
    console.info(
      JSON.stringify({
        scenario: "held",
        mostOnQueue,
        heldDeliveries,
        copies,
        jobs: run?.jobsDone,
      }),
    );
    expect(run?.jobsDone).toBeGreaterThan(18);
    expect(drained.invocations).toBe((run?.jobsDone ?? 0) + heldDeliveries + copies);
    expect(mostOnQueue).toBeLessThanOrEqual(2 + 3);
  });
});

describe("a run's jobs on the move", () => {
  beforeAll(async () => {
    await sqs.send(new PurgeQueueCommand({ QueueUrl: stack.outputs.SyncJobsQueueUrl }));
  });
  const runsTable = () => stack.outputs.RunsTableName as string;
  const scheduled = { "detail-type": "Scheduled Event", source: "aws.events", detail: {} };

  async function setLastProgress(syncId: string, at: Date) {
    await dynamo.send(
      new UpdateCommand({
        TableName: runsTable(),
        Key: { pk: `run#${syncId}`, sk: "run" },
        UpdateExpression: "SET lastProgressAt = :at",
        ExpressionAttributeValues: { ":at": at.toISOString() },
      }),
    );
  }

  it("carry their instance as MessageGroupId, and a job that starts moves the run's stall clock", async () => {
    // Prepare: an upstream that answers 503 to everything, so no job commits; the run's clock an
    // hour old.
    const { upstream } = await instance("moving", {
      seed: 23,
      size: { users: 20, teams: 2, roles: 2 },
    });
    upstream.faults = { serverErrors: { every: 1, burst: 1 } };
    const syncId = await startSync("moving");
    await setLastProgress(syncId, new Date(Date.now() - 3_600_000));
    const records = await receiveRecords(2);
    expect(records.map((r) => r.attributes.MessageGroupId)).toEqual(["moving", "moving"]);

    // Act: a worker runs the root jobs (they fail and stay on the queue), then the schedule runs.
    const before = Date.now();
    const failed = await stack.invoke("syncWorker", { Records: records }).catch((e: unknown) => e);
    const sweep = await stack.invoke<{ checks: string[] }>("scheduler", scheduled);
    const checked = await stack.drainQueue("scheduler");

    // Assess: nothing committed (every record failed, so the invocation failed), yet the clock
    // moved when the jobs started: the sweep's check of the run (the scheduler draining its
    // instance-checks queue) leaves it running.
    expect(failed).toMatchObject({ message: expect.stringMatching(/^All records failed/) });
    const run = await runs.get(syncId);
    expect(run?.jobsDone).toBe(0);
    expect(Date.parse(run?.lastProgressAt ?? "")).toBeGreaterThanOrEqual(before - 1_000);
    expect(sweep.checks).toContain("moving");
    expect(checked.failedRecords).toBe(0);
    expect(run?.status).toBe("running");
  });

  it("a job refused for a rate limit goes back with a delay that grows with its refusals, and the run's clock moves to its return", async () => {
    // Prepare: an upstream that refuses every request for 3 s (longer than a delivery waits in
    // place, 2 s in all), and a root job already refused 7 times (its message attribute says so).
    const { upstream, syncId, plan } = await unpacedPlan("refused", 24);
    plan.messageAttributes.rateRefusals = { dataType: "Number", stringValue: "7" };
    upstream.faults = { rateLimit: { every: 1, retryAfter: "seconds", seconds: 3 } };

    // Act: a worker runs it.
    const before = Date.now();
    const answer = await stack.invoke<{ batchItemFailures: unknown[] }>("syncWorker", {
      Records: [plan],
    });

    // Assess: done with (not failed): a copy went back with a delay of 64 to 128 s (the 8th
    // refusal), counted as its 8th, and the run's stall clock moved to when it comes back.
    expect(answer.batchItemFailures).toEqual([]);
    const { Attributes = {} } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: stack.outputs.SyncJobsQueueUrl,
        AttributeNames: ["ApproximateNumberOfMessagesDelayed"],
      }),
    );
    expect(Number(Attributes.ApproximateNumberOfMessagesDelayed)).toBe(1);
    const line = stack
      .logs("syncWorker")
      .map(({ line }) => line)
      .find((l) => l.includes("job sent back with a delay") && l.includes(syncId));
    const delaySeconds = Number(
      (JSON.parse(line ?? "{}") as { delaySeconds?: number }).delaySeconds,
    );
    expect(delaySeconds).toBeGreaterThanOrEqual(64);
    expect(delaySeconds).toBeLessThanOrEqual(128);
    // The clock: when the copy comes back (the hand-back's time plus its delay).
    const run = await runs.get(syncId);
    const clockAhead = Date.parse(run?.lastProgressAt ?? "") - before;
    expect(clockAhead).toBeGreaterThanOrEqual(delaySeconds * 1000);
    expect(clockAhead).toBeLessThanOrEqual(delaySeconds * 1000 + 60_000);
  });

  it("a job whose request is refused for a second waits in place and commits, nothing sent back", async () => {
    // Prepare: an upstream that accepts 2 requests in any second: the plan's token and its two
    // first pages, sent at once, meet a 429 asking for 1 s.
    const { upstream, syncId, plan } = await unpacedPlan("waited", 25);
    upstream.faults = { limit: { requestsPerSecond: 2 } };

    // Act
    const answer = await stack.invoke<{ batchItemFailures: unknown[] }>("syncWorker", {
      Records: [plan],
    });

    // Assess: refused, waited in the function, committed; no copy went back to the queue.
    expect(answer.batchItemFailures).toEqual([]);
    expect(upstream.stats.throttled).toBeGreaterThan(0);
    const sentBack = stack
      .logs("syncWorker")
      .some(({ line }) => line.includes("job sent back with a delay") && line.includes(syncId));
    expect(sentBack).toBe(false);
    expect((await runs.get(syncId))?.jobsDone).toBe(1);
  });

  it("a job held by a worker that died before it released it is released by the next delivery of the run", async () => {
    // Prepare: a run whose plan job ran and committed; its one membership job then held in the
    // runs table, not on the queue: what a commit leaves when its worker dies after it held the
    // children and before it released them (the worker's message was not deleted).
    const { platform } = await instance("orphan", {
      seed: 27,
      size: { users: 30, teams: 3, roles: 2 },
    });
    const syncId = await startSync("orphan");
    const roots = await receiveRecords(2);
    const plan = roots.find((r) => r.body.includes('"plan"'));
    const role = roots.find((r) => !r.body.includes('"plan"'));
    if (!plan || !role) throw new Error("the run's two root jobs were not on the queue");
    await stack.invoke("syncWorker", { Records: [plan] });
    const [child] = await receiveRecords(1);
    if (!child) throw new Error("the plan job sent no child");
    await deleteMessage(child);
    await new JobSlots(runsTable(), syncId, 8).hold([parseJob(JSON.parse(child.body))]);

    // Act: the plan job's message comes back (its worker died); then the job it released and the
    // role job run, one a delivery (other tests' messages wait on this queue: no drain here).
    await stack.invoke("syncWorker", { Records: [plan] });
    const released = (await receiveRecords(10)).filter((r) => r.body.includes(syncId));
    for (const record of [role, ...released]) {
      await stack.invoke("syncWorker", { Records: [record] });
      await deleteMessage(record);
    }
    await deleteMessage(plan);
    await stack.drainQueue("finalize");

    // Assess: the plan job's second delivery found it done and released the held job; the run is
    // exact, nothing is left held.
    expect(released.map((r) => r.body)).toEqual([child.body]);
    expect(await heldJobs(syncId)).toBe(0);
    const run = await runs.get(syncId);
    expect(run?.status).toBe("complete");
    expect(run?.jobsDone).toBe(3);
    expect(platform.uploads.get(syncId)?.accepted).toBe(1);
  });
});
