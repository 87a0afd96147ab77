// The packaged stack deployed to moto the way the framework deploys it: outputs, the functions'
// configuration pointing at the stack's own resources, the queue wiring, and a direct invoke.
// The cases run first in harness.test.ts, on that file's stack: one moto_server and one deploy
// for both (about 7 s of a worker's time: starting moto, deploying, loading the file's modules).
import { DescribeTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { HeadBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  awsClientConfig,
  deployedDashboard,
  graphedMetrics,
  type Moto,
  type Stack,
} from "./harness";

const OUTPUTS = [
  "InstancesTableName",
  "RunsTableName",
  "IdempotencyTableName",
  "SyncJobsQueueUrl",
  "SyncJobsDeadLetterQueueUrl",
  "FinalizeQueueUrl",
  "FinalizeDeadLetterQueueUrl",
  "InstanceChecksQueueUrl",
  "InstanceChecksDeadLetterQueueUrl",
  "ShardsBucketName",
  "SchedulerFunctionName",
  "SyncWorkerFunctionName",
  "FinalizeFunctionName",
  "ActionFunctionName",
  "SettingsFunctionName",
  "SettingsFunctionArn",
  "SecretsPrefix",
];

/**
 * The deployed stack's cases, in the describe block that calls this. `deployed` gives the stack
 * once the file's beforeAll has deployed it. They read what was deployed (syncWorker's code may
 * have been replaced: nothing here reads code) and invoke the action function once.
 */
export function deployedStackCases(deployed: () => { moto: Moto; stack: Stack }) {
  let stack: Stack;
  let dynamodb: DynamoDBClient;
  let s3: S3Client;
  let sqs: SQSClient;

  beforeAll(() => {
    const { moto, stack: deployedStack } = deployed();
    stack = deployedStack;
    const config = awsClientConfig(moto.endpoint);
    dynamodb = new DynamoDBClient(config);
    s3 = new S3Client(config);
    sqs = new SQSClient({ ...config, useQueueUrlAsEndpoint: false });
  });

  afterAll(() => {
    for (const client of [dynamodb, s3, sqs]) client?.destroy();
  });

  async function queueAttributes(url: string | undefined) {
    const { Attributes = {} } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All"] }),
    );
    return Attributes;
  }

  it("names the stack after the stage and has every output", () => {
    expect(stack.name).toBe("access-connectors-dev");
    for (const name of OUTPUTS) expect(stack.outputs[name], name).toMatch(/\S/);
    expect(stack.outputs.SecretsPrefix).toBe("access-connectors/dev/");
    expect(Object.keys(stack.functions).sort()).toEqual([
      "action",
      "finalize",
      "scheduler",
      "settings",
      "syncWorker",
    ]);
    expect(stack.outputs.SyncWorkerFunctionName).toBe(stack.functions.syncWorker?.name);
    expect(stack.outputs.SettingsFunctionName).toBe(stack.functions.settings?.name);
    expect(stack.outputs.SettingsFunctionArn).toMatch(
      /^arn:aws:lambda:.*:function:access-connectors-dev-settings$/,
    );
  });

  it("points every function's environment at the stack's own resources", async () => {
    const o = stack.outputs;
    for (const fn of Object.values(stack.functions)) {
      const env = fn.environment;
      expect(env, fn.key).toMatchObject({
        STAGE: "dev",
        INSTANCES_TABLE: o.InstancesTableName,
        RUNS_TABLE: o.RunsTableName,
        IDEMPOTENCY_TABLE: o.IdempotencyTableName,
        SHARDS_BUCKET: o.ShardsBucketName,
        SYNC_JOBS_QUEUE_URL: o.SyncJobsQueueUrl,
        FINALIZE_QUEUE_URL: o.FinalizeQueueUrl,
        INSTANCE_CHECKS_QUEUE_URL: o.InstanceChecksQueueUrl,
        SECRETS_PREFIX: o.SecretsPrefix,
        JOB_MAX_RECEIVES: "5",
        RUN_STALL_SECONDS: "900",
        POWERTOOLS_SERVICE_NAME: "access-connectors",
        POWERTOOLS_METRICS_NAMESPACE: "AccessConnectors",
        POWERTOOLS_LOG_LEVEL: "INFO",
        MALLOC_ARENA_MAX: "2",
        MALLOC_MMAP_THRESHOLD_: "131072",
        NODE_OPTIONS: "--enable-source-maps --max-semi-space-size=4",
      });
      expect(fn.runtime).toBe("nodejs22.x");
      expect(fn.handler).toBe("handler.handler");
    }
    const env = stack.functions.scheduler?.environment ?? {};
    for (const table of [env.INSTANCES_TABLE, env.RUNS_TABLE, env.IDEMPOTENCY_TABLE]) {
      const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: table }));
      expect(Table?.TableStatus, table).toBe("ACTIVE");
    }
    await expect(
      s3.send(new HeadBucketCommand({ Bucket: env.SHARDS_BUCKET })),
    ).resolves.toBeDefined();
    const jobs = await queueAttributes(env.SYNC_JOBS_QUEUE_URL);
    expect(jobs.VisibilityTimeout).toBe("180");
    expect(JSON.parse(jobs.RedrivePolicy ?? "{}")).toMatchObject({
      maxReceiveCount: Number(env.JOB_MAX_RECEIVES),
      deadLetterTargetArn: (await queueAttributes(o.SyncJobsDeadLetterQueueUrl)).QueueArn,
    });
    const finalize = await queueAttributes(env.FINALIZE_QUEUE_URL);
    expect(finalize.VisibilityTimeout).toBe("5400");
    expect(JSON.parse(finalize.RedrivePolicy ?? "{}")).toMatchObject({
      maxReceiveCount: 3,
      deadLetterTargetArn: (await queueAttributes(o.FinalizeDeadLetterQueueUrl)).QueueArn,
    });
    const checks = await queueAttributes(env.INSTANCE_CHECKS_QUEUE_URL);
    expect(checks.VisibilityTimeout).toBe("360");
    expect(JSON.parse(checks.RedrivePolicy ?? "{}")).toMatchObject({
      maxReceiveCount: 3,
      deadLetterTargetArn: (await queueAttributes(o.InstanceChecksDeadLetterQueueUrl)).QueueArn,
    });
  });

  it("deploys the timeouts and memory of serverless.yml", () => {
    const f = stack.functions;
    expect([f.scheduler, f.syncWorker, f.finalize, f.action].map((x) => x?.timeoutSeconds)).toEqual(
      [60, 120, 900, 30],
    );
    expect(f.finalize?.memoryMb).toBe(7076);
  });

  it("wires SyncJobsQueue to syncWorker, FinalizeQueue to finalize and InstanceChecksQueue to the scheduler", async () => {
    const jobsArn = (await queueAttributes(stack.outputs.SyncJobsQueueUrl)).QueueArn;
    const finalizeArn = (await queueAttributes(stack.outputs.FinalizeQueueUrl)).QueueArn;
    const checksArn = (await queueAttributes(stack.outputs.InstanceChecksQueueUrl)).QueueArn;
    expect(stack.functions.syncWorker?.queues).toEqual([
      expect.objectContaining({
        queueArn: jobsArn,
        batchSize: 1,
        functionResponseTypes: ["ReportBatchItemFailures"],
        maximumConcurrency: 10,
        visibilityTimeoutSeconds: 180,
      }),
    ]);
    expect(stack.functions.finalize?.queues).toEqual([
      expect.objectContaining({
        queueArn: finalizeArn,
        batchSize: 1,
        functionResponseTypes: ["ReportBatchItemFailures"],
        visibilityTimeoutSeconds: 5400,
      }),
    ]);
    expect(stack.functions.scheduler?.queues).toEqual([
      expect.objectContaining({
        queueArn: checksArn,
        batchSize: 10,
        functionResponseTypes: ["ReportBatchItemFailures"],
        maximumConcurrency: 10,
        visibilityTimeoutSeconds: 360,
      }),
    ]);
    expect(stack.functions.action?.queues).toEqual([]);
  });

  it("indexes the runs table by instance, newest first, keys only (`cloud runs`)", async () => {
    const { Table } = await dynamodb.send(
      new DescribeTableCommand({ TableName: stack.outputs.RunsTableName }),
    );
    expect(Table?.GlobalSecondaryIndexes).toEqual([
      expect.objectContaining({
        IndexName: "byConnector",
        KeySchema: [
          { AttributeName: "connectorId", KeyType: "HASH" },
          { AttributeName: "startedAt", KeyType: "RANGE" },
        ],
        Projection: { ProjectionType: "KEYS_ONLY" },
      }),
    ]);
  });

  it("deploys the stage's dashboard, graphing its own functions, queues and runs", async () => {
    const graphs = graphedMetrics(await deployedDashboard(stack));
    const functionNames = ["scheduler", "syncWorker", "finalize", "action"].map(
      (key) => stack.functions[key]?.name,
    );
    for (const title of [
      "Function errors",
      "Function throttles",
      "Function duration (longest, ms)",
    ]) {
      const refs = graphs.get(title) ?? [];
      expect(
        refs.map((r) => r.namespace),
        title,
      ).toEqual(functionNames.map(() => "AWS/Lambda"));
      expect(
        refs.map((r) => r.dimensions.FunctionName),
        title,
      ).toEqual(functionNames);
    }
    const queueName = (url: string | undefined) => url?.split("/").at(-1);
    expect(graphs.get("Dead-letter queues (messages)")).toEqual(
      [
        stack.outputs.SyncJobsDeadLetterQueueUrl,
        stack.outputs.FinalizeDeadLetterQueueUrl,
        stack.outputs.InstanceChecksDeadLetterQueueUrl,
      ].map((url) => ({
        namespace: "AWS/SQS",
        name: "ApproximateNumberOfMessagesVisible",
        dimensions: { QueueName: queueName(url) },
      })),
    );
    // The runs' metrics: the functions' namespace, this stage only.
    const runs = ["Runs by outcome", "Run duration (complete runs, ms)", "Jobs"].flatMap(
      (title) => graphs.get(title) ?? [],
    );
    expect(runs.map((r) => r.name)).toEqual(
      expect.arrayContaining(["runsCompleted", "runsFailed", "runsHeld", "runDuration", "jobs"]),
    );
    expect(graphs.get("Upstream requests and 429s")?.map((r) => r.name)).toEqual(
      expect.arrayContaining(["requests", "upstream429s"]),
    );
    for (const ref of runs) {
      expect(ref.namespace).toBe("AccessConnectors");
      expect(ref.dimensions).toEqual({ service: "access-connectors", stage: "dev" });
    }
  });

  it("invokes a packaged handler directly", async () => {
    // A malformed action request is answered, never thrown (docs/cloud.md).
    const answer = await stack.invoke("action", {});
    expect(JSON.stringify(answer)).toContain("invalid_request");
  });
}
