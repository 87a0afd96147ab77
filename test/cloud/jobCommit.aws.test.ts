// A coarse job's commit on moto_server (no stack: a runs table, a shards bucket and two queues):
// one object a job, its children claimed in the commit's transaction, and a second delivery,
// whatever pages it read, changing nothing. The functions' requests are counted as the cloud
// benches count them (test/aws/harness/awsRequests.ts).
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { CreateQueueCommand, ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CloudConfig, RunStore } from "../../lib/cloud";
import { RunFlow } from "../../lib/cloud/runFlow";
import type { SnapshotRecord } from "../../lib/snapshot";
import { type Job, type JobResult, makeJob } from "../../lib/sync";
import { jobId } from "../../lib/sync/job";
import {
  type AwsRequestCounter,
  awsClientConfig,
  awsEnv,
  createPkSkTable,
  type Moto,
  startAwsRequestCounter,
  startMoto,
} from "../aws/harness";

let moto: Moto;
let counter: AwsRequestCounter;
let config: CloudConfig;
let s3: S3Client;
let sqs: SQSClient;

beforeAll(async () => {
  moto = await startMoto();
  counter = await startAwsRequestCounter(moto.endpoint);
  const clientConfig = awsClientConfig(moto.endpoint);
  const dynamo = new DynamoDBClient(clientConfig);
  await createPkSkTable(dynamo, "runs");
  dynamo.destroy();
  s3 = new S3Client({ ...clientConfig, forcePathStyle: true });
  await s3.send(new CreateBucketCommand({ Bucket: "shards" }));
  sqs = new SQSClient({ ...clientConfig, useQueueUrlAsEndpoint: false });
  const queue = async (name: string) =>
    (await sqs.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl as string;
  config = {
    stage: "test",
    instancesTable: "instances",
    runsTable: "runs",
    idempotencyTable: "idempotency",
    shardsBucket: "shards",
    syncJobsQueueUrl: await queue("jobs"),
    finalizeQueueUrl: await queue("finalize"),
    instanceChecksQueueUrl: await queue("checks"),
    secretsPrefix: "test/",
    jobMaxReceives: 5,
    runStallSeconds: 900,
    instanceJobsInFlight: 8,
  };
  // The runtime's clients (made at first use, in this file's module context) go through the counter.
  Object.assign(process.env, awsEnv(counter.endpoint));
});

afterAll(async () => {
  s3?.destroy();
  sqs?.destroy();
  await counter?.close();
  await moto?.stop();
});

let runs = 0;
/** A running run whose one root job is a list's first page. */
async function openRun(): Promise<{ syncId: string; root: Job }> {
  const identity = { syncId: `sync-${++runs}`, connector: "test", connectorId: "test-1" };
  const root = makeJob(identity, { resourceType: "user", op: "list", cursor: 1 });
  await new RunStore("runs").open({ ...identity, rootJobIds: [jobId(root)] });
  return { syncId: identity.syncId, root };
}

const records = (n: number): SnapshotRecord[] =>
  Array.from(
    { length: n },
    (_, i) => ({ kind: "resource", type: "user", id: `u${i}` }) as SnapshotRecord,
  );

/** What a delivery of `root` read: `pages` pages, each asking for one member job, and the next. */
function result(root: Job, pages: number): JobResult {
  const members = Array.from({ length: pages }, (_, i) =>
    makeJob(root, { resourceType: "user", op: "members", parent: { type: "user", id: `${i}` } }),
  );
  const next = { ...root, cursor: pages + 1 };
  return { records: records(3 * pages), followUps: [...members, next], next };
}

async function objects(syncId: string): Promise<string[]> {
  const { Contents = [] } = await s3.send(
    new ListObjectsV2Command({ Bucket: "shards", Prefix: `runs/${syncId}/` }),
  );
  return Contents.map((o) => o.Key as string);
}

async function sent(): Promise<string[]> {
  const ids: string[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: config.syncJobsQueueUrl, MaxNumberOfMessages: 10 }),
    );
    if (Messages.length === 0) return ids;
    for (const m of Messages) ids.push(jobId(JSON.parse(m.Body as string) as Job));
  }
}

describe("a coarse job's commit", () => {
  it("writes one object and claims its children in one transaction; a second delivery that read other pages writes nothing", async () => {
    const { syncId, root } = await openRun();
    const flow = new RunFlow(config);
    counter.take();

    const first = await flow.commit(root, "delivery-1", result(root, 4), 4);
    const counts = counter.take();
    // A later delivery stopped at another bound: other records, other children.
    const second = await flow.commit(root, "delivery-2", result(root, 2), 2);

    expect(first).toEqual({ outcome: "committed", children: 5 });
    expect(second).toEqual({ outcome: "already_done", children: 0 });
    expect(counts.s3).toEqual({ PUT: 1 });
    // The commit's transaction (the job, the run, five children), a job slot reserved for each
    // child sent (docs/cloud.md, "Jobs"), and the children's sent mark.
    expect(counts.dynamodb.TransactWriteItems).toBe(1);
    expect(counts.dynamodbItemsWritten).toBe(2 + 5 + 5 + 1);
    expect(await objects(syncId)).toEqual([
      `runs/${syncId}/shards/${jobId(root)}/delivery-1.jsonl`,
    ]);
    const store = new RunStore("runs");
    expect(await store.get(syncId)).toMatchObject({
      jobsDone: 1,
      outstanding: 5,
      records: 12,
      requests: 4,
    });
    const markers = await store.markers(syncId);
    // Only the first delivery's children: nothing the second read is pending.
    const expected = result(root, 4).followUps.map(jobId);
    expect(
      markers
        .filter((m) => m.state === "pending")
        .map((m) => m.jobId)
        .sort(),
    ).toEqual([...expected].sort());
    expect((await sent()).sort()).toEqual([...expected].sort());
  });

  it("writes no object for a job that read no records, and counts a child another job owns once", async () => {
    const { syncId, root } = await openRun();
    const flow = new RunFlow(config);
    const shared = makeJob(root, {
      resourceType: "user",
      op: "members",
      parent: { type: "user", id: "7" },
    });
    const other = makeJob(root, { resourceType: "user", op: "list", cursor: 99 });
    await new RunStore("runs").commit(syncId, jobId(root), {
      records: 0,
      requests: 1,
      children: [other, shared].map((job) => ({ jobId: jobId(job), job: JSON.stringify(job) })),
    });
    await sent();
    counter.take();

    const committed = await flow.commit(other, "d", { records: [], followUps: [shared] }, 1);

    expect(committed).toEqual({ outcome: "committed", children: 0 });
    expect(counter.take().s3).toEqual({});
    expect(await objects(syncId)).toEqual([]);
    expect(await sent()).toEqual([]);
    expect(await new RunStore("runs").get(syncId)).toMatchObject({ jobsDone: 2, outstanding: 1 });
    expect(await flow.committedShards(syncId).catch((e: Error) => e.message)).toMatch(
      /1 jobs of the run are not done/,
    );
  });

  it("has a redelivery send the children a committed job left unsent, from their markers", async () => {
    const { syncId, root } = await openRun();
    // The delivery that committed died before it sent the children.
    const done = result(root, 2);
    await new RunStore("runs").commit(syncId, jobId(root), {
      records: 6,
      requests: 2,
      children: done.followUps.map((job) => ({ jobId: jobId(job), job: JSON.stringify(job) })),
    });

    const flow = new RunFlow(config);
    const again = await flow.accept(root);
    const resent = await sent();
    const thrice = await flow.accept(root);

    expect([again.status, thrice.status]).toEqual(["already_done", "already_done"]);
    expect(resent.sort()).toEqual(done.followUps.map(jobId).sort());
    expect(await sent()).toEqual([]);
    expect((await new RunStore("runs").marker(syncId, jobId(root)))?.childrenSent).toBe(true);
  });
});
