// Deploys what `serverless package` wrote to moto the way the framework deploys it, and gives
// tests the deployed functions to invoke and the queues to drain.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import {
  CloudFormationClient,
  CreateStackCommand,
  DescribeStackEventsCommand,
  DescribeStackResourcesCommand,
  DescribeStacksCommand,
  type Stack as StackDescription,
  UpdateStackCommand,
} from "@aws-sdk/client-cloudformation";
import {
  type FunctionConfiguration,
  GetFunctionConfigurationCommand,
  LambdaClient,
  ListEventSourceMappingsCommand,
  UpdateEventSourceMappingCommand,
  UpdateFunctionCodeCommand,
  UpdateFunctionConfigurationCommand,
} from "@aws-sdk/client-lambda";
import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { GetQueueAttributesCommand, GetQueueUrlCommand, SQSClient } from "@aws-sdk/client-sqs";
import {
  type AwsRequestCounter,
  type AwsRequestCounterOptions,
  startAwsRequestCounter,
} from "./awsRequests";
import { type FunctionConfig, FunctionRuntime, type InvokeOptions, type LogLine } from "./lambda";
import { awsClientConfig, awsEnv, type Moto, startMoto } from "./moto";
import { ensurePackaged } from "./package";
import { type DrainOptions, type DrainStats, drainQueue, type QueueMapping } from "./sqs";

export type { FunctionConfig, InvokeOptions, LogLine } from "./lambda";
export type { DrainOptions, DrainStats, QueueMapping } from "./sqs";

/** A function of the stack as deployed: its configuration and the queues that feed it. */
export interface DeployedFunction extends FunctionConfig {
  /** The logical ID in the template, e.g. SyncWorkerLambdaFunction. */
  logicalId: string;
  /** SQS event source mappings, as deployed (the harness then disables them on moto). */
  queues: QueueMapping[];
}

export interface Stack {
  readonly name: string;
  readonly stage: string;
  readonly region: string;
  readonly moto: Moto;
  /** The packaged update template it was deployed from (what moto skips is still in it). */
  readonly template: Template;
  /** The stack's outputs (InstancesTableName, SyncJobsQueueUrl, ...). */
  readonly outputs: Readonly<Record<string, string>>;
  /** By function key of serverless.yml: scheduler, syncWorker, finalize, action. */
  readonly functions: Readonly<Record<string, DeployedFunction>>;
  /** Packaging and deployment times, ms. */
  readonly timings: { package: number; deploy: number; packaged: boolean };
  /** Invokes a function (RequestResponse) with its packaged code; resolves with its answer. */
  invoke<T = unknown>(functionKey: string, event: unknown, options?: InvokeOptions): Promise<T>;
  /** The same, by the deployed function's name (as the operator commands and stack outputs give it). */
  invokeByName<T = unknown>(functionName: string, event: unknown): Promise<T>;
  /** Runs the function on its queue until the queue is empty, as its event source mapping does. */
  drainQueue(functionKey: string, options?: DrainOptions): Promise<DrainStats>;
  /** Changes environment variables (UpdateFunctionConfiguration); the next invocation is cold. */
  updateEnvironment(
    functionKey: string,
    variables: Record<string, string | undefined>,
  ): Promise<void>;
  /** Deploys other code for a function (UpdateFunctionCode with a zip); the next invocation is cold. */
  updateFunctionCode(functionKey: string, zip: Uint8Array): Promise<void>;
  /** What the functions wrote to stdout/stderr (Powertools' JSON lines), oldest first. */
  logs(functionKey?: string): LogLine[];
  /** What the functions asked of AWS, when deployed with `countAwsRequests`. */
  readonly awsRequests: AwsRequestCounter | undefined;
  /** Terminates the containers and removes unpacked code. Does not stop moto. */
  close(): Promise<void>;
}

export interface DeployOptions {
  stage?: string;
  /**
   * The functions reach moto through a proxy that counts their requests by what AWS bills
   * (`Stack.awsRequests`, awsRequests.ts; its options hold S3 GETs); the test process's own
   * requests go to moto directly.
   */
  countAwsRequests?: boolean | AwsRequestCounterOptions;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Template {
  Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
}

async function waitForStack(cfn: CloudFormationClient, name: string, action: string) {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { Stacks } = await cfn.send(new DescribeStacksCommand({ StackName: name }));
    const stack = Stacks?.[0] as StackDescription;
    const status = stack.StackStatus ?? "";
    if (status === `${action}_COMPLETE`) return stack;
    if (!status.endsWith("_IN_PROGRESS") || Date.now() > deadline) {
      const { StackEvents = [] } = await cfn.send(
        new DescribeStackEventsCommand({ StackName: name }),
      );
      const reasons = StackEvents.filter((e) => e.ResourceStatusReason)
        .slice(0, 10)
        .map((e) => `${e.LogicalResourceId}: ${e.ResourceStatus} ${e.ResourceStatusReason}`);
      throw new Error(
        `stack ${name}: ${status} (wanted ${action}_COMPLETE)\n${reasons.join("\n")}`,
      );
    }
    await sleep(100);
  }
}

function toConfig(key: string, c: FunctionConfiguration): FunctionConfig {
  return {
    key,
    name: c.FunctionName ?? "",
    arn: c.FunctionArn ?? "",
    handler: c.Handler ?? "",
    runtime: c.Runtime ?? "",
    timeoutSeconds: c.Timeout ?? 3,
    memoryMb: c.MemorySize ?? 128,
    environment: { ...(c.Environment?.Variables ?? {}) },
  };
}

/**
 * Packages (unless current), then deploys like `serverless deploy`: creates the stack from the
 * create template (the deployment bucket), uploads the function zips under the keys the update
 * template names (Code.S3Key), updates the stack, and reads back outputs, function
 * configurations and event source mappings.
 */
export async function deployStack(moto: Moto, options: DeployOptions = {}): Promise<Stack> {
  const stage = options.stage ?? "dev";
  const region = moto.region;
  const pkg = await ensurePackaged(stage, region);
  const deployStarted = performance.now();
  const config = awsClientConfig(moto.endpoint, region);
  const cfn = new CloudFormationClient(config);
  const s3 = new S3Client({ ...config, forcePathStyle: true });
  const lambda = new LambdaClient(config);
  // CloudFormation-made queues are named https://sqs.<region>.amazonaws.com/...: without this
  // the client would send requests to that host, off loopback.
  const sqs = new SQSClient({ ...config, useQueueUrlAsEndpoint: false });

  const name = `access-connectors-${stage}`;
  const createTemplate = await readFile(
    join(pkg.dir, "cloudformation-template-create-stack.json"),
    "utf8",
  );
  const updateTemplate = await readFile(
    join(pkg.dir, "cloudformation-template-update-stack.json"),
    "utf8",
  );
  const capabilities = ["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM"] as const;
  await cfn.send(
    new CreateStackCommand({
      StackName: name,
      TemplateBody: createTemplate,
      Capabilities: [...capabilities],
      Tags: [{ Key: "STAGE", Value: stage }],
    }),
  );
  const created = await waitForStack(cfn, name, "CREATE");
  const bucket = created.Outputs?.find(
    (o) => o.OutputKey === "ServerlessDeploymentBucketName",
  )?.OutputValue;
  if (!bucket) throw new Error(`stack ${name}: no ServerlessDeploymentBucketName output`);

  // Function code, where the update template expects it.
  const template = JSON.parse(updateTemplate) as Template;
  const zips = new Map<string, string>(); // logical ID -> local zip
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== "AWS::Lambda::Function") continue;
    const code = resource.Properties?.Code as { S3Key?: string } | undefined;
    if (!code?.S3Key) throw new Error(`${logicalId}: no Code.S3Key in the update template`);
    const zipFile = join(pkg.functionsDir, basename(code.S3Key));
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: code.S3Key, Body: await readFile(zipFile) }),
    );
    zips.set(logicalId, zipFile);
  }
  await cfn.send(
    new UpdateStackCommand({
      StackName: name,
      TemplateBody: updateTemplate,
      Capabilities: [...capabilities],
    }),
  );
  const updated = await waitForStack(cfn, name, "UPDATE");
  const outputs: Record<string, string> = {};
  for (const o of updated.Outputs ?? []) {
    if (o.OutputKey && o.OutputValue !== undefined) outputs[o.OutputKey] = o.OutputValue;
  }

  const { StackResources = [] } = await cfn.send(
    new DescribeStackResourcesCommand({ StackName: name }),
  );
  const functions: Record<string, DeployedFunction> = {};
  for (const logicalId of zips.keys()) {
    // The framework names a function's resource <Key>LambdaFunction (first letter upper).
    const stem = logicalId.replace(/LambdaFunction$/, "");
    const key = stem.charAt(0).toLowerCase() + stem.slice(1);
    const physical = StackResources.find((r) => r.LogicalResourceId === logicalId);
    if (!physical?.PhysicalResourceId) throw new Error(`${logicalId} was not deployed`);
    const configuration = await lambda.send(
      new GetFunctionConfigurationCommand({ FunctionName: physical.PhysicalResourceId }),
    );
    // By the function's ARN: moto matches the FunctionName filter literally against what the
    // template gave (an ARN), so a filter by name finds nothing there.
    const { EventSourceMappings = [] } = await lambda.send(
      new ListEventSourceMappingsCommand({ FunctionName: configuration.FunctionArn }),
    );
    const queues: QueueMapping[] = [];
    for (const m of EventSourceMappings) {
      if (m.FunctionArn !== configuration.FunctionArn) continue;
      if (!m.EventSourceArn?.startsWith("arn:aws:sqs:") || !m.UUID) continue;
      const queueName = m.EventSourceArn.split(":").pop() ?? "";
      const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: queueName }));
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["VisibilityTimeout"] }),
      );
      queues.push({
        uuid: m.UUID,
        queueArn: m.EventSourceArn,
        queueUrl: QueueUrl ?? "",
        batchSize: m.BatchSize ?? 10,
        functionResponseTypes: [...(m.FunctionResponseTypes ?? [])],
        ...(m.ScalingConfig?.MaximumConcurrency
          ? { maximumConcurrency: m.ScalingConfig.MaximumConcurrency }
          : {}),
        visibilityTimeoutSeconds: Number(Attributes?.VisibilityTimeout ?? 30),
      });
      // moto, on every SendMessage to a queue with an enabled mapping, tries to run the
      // function in Docker, fails, and leaves the message received once (so it reaches the
      // dead-letter queue one delivery early). A disabled mapping is skipped: the harness, not
      // moto, plays Lambda's poller (drainQueue). What was deployed is recorded above.
      await lambda.send(new UpdateEventSourceMappingCommand({ UUID: m.UUID, Enabled: false }));
    }
    functions[key] = { ...toConfig(key, configuration), logicalId, queues };
  }

  const logLines: LogLine[] = [];
  const echo = process.env.HARNESS_LAMBDA_LOGS === "1";
  const onLine = (line: LogLine) => {
    logLines.push(line);
    if (logLines.length > 50_000) logLines.shift();
    if (echo) process.stderr.write(`[${line.functionKey}] ${line.line}\n`);
  };
  const awsRequests = options.countAwsRequests
    ? await startAwsRequestCounter(
        moto.endpoint,
        options.countAwsRequests === true ? {} : options.countAwsRequests,
      )
    : undefined;
  const environment = awsEnv(awsRequests?.endpoint ?? moto.endpoint, region);
  const runtimes = new Map<string, FunctionRuntime>();
  for (const [key, fn] of Object.entries(functions)) {
    const zipFile = zips.get(fn.logicalId) as string;
    runtimes.set(key, new FunctionRuntime(fn, zipFile, region, environment, onLine));
  }
  const runtime = (key: string) => {
    const found = runtimes.get(key);
    if (!found) {
      throw new Error(
        `no function ${key} in stack ${name} (have: ${[...runtimes.keys()].join(", ")})`,
      );
    }
    return found;
  };
  const scratch: string[] = [];

  const refresh = async (key: string, zipFile?: string) => {
    const fn = functions[key] as DeployedFunction;
    const configuration = await lambda.send(
      new GetFunctionConfigurationCommand({ FunctionName: fn.name }),
    );
    functions[key] = {
      ...toConfig(key, configuration),
      logicalId: fn.logicalId,
      queues: fn.queues,
    };
    await runtime(key).reconfigure(functions[key] as DeployedFunction, zipFile);
  };

  return {
    name,
    stage,
    template,
    region,
    moto,
    outputs,
    functions,
    awsRequests,
    timings: {
      package: pkg.ms,
      deploy: Math.round(performance.now() - deployStarted),
      packaged: pkg.packaged,
    },
    async invoke<T>(functionKey: string, event: unknown, invokeOptions?: InvokeOptions) {
      return (await runtime(functionKey).invoke<T>(event, invokeOptions)).result;
    },
    async invokeByName<T>(functionName: string, event: unknown) {
      const key = Object.entries(functions).find(([, f]) => f.name === functionName)?.[0];
      if (!key) throw new Error(`no function named ${functionName} in the stack`);
      return (await runtime(key).invoke<T>(event)).result;
    },
    drainQueue(functionKey, drainOptions) {
      const fn = runtime(functionKey);
      const mapping = functions[functionKey]?.queues[0];
      if (!mapping) throw new Error(`${functionKey} has no SQS event source mapping`);
      return drainQueue(sqs, fn, mapping, region, drainOptions);
    },
    async updateEnvironment(functionKey, variables) {
      const fn = runtime(functionKey).config;
      const merged: Record<string, string> = { ...fn.environment };
      for (const [k, v] of Object.entries(variables)) {
        if (v === undefined) delete merged[k];
        else merged[k] = v;
      }
      await lambda.send(
        new UpdateFunctionConfigurationCommand({
          FunctionName: fn.name,
          Environment: { Variables: merged },
        }),
      );
      await refresh(functionKey);
    },
    async updateFunctionCode(functionKey, zip) {
      const fn = runtime(functionKey).config;
      await lambda.send(new UpdateFunctionCodeCommand({ FunctionName: fn.name, ZipFile: zip }));
      const dir = await mkdtemp(join(tmpdir(), `lambda-code-${functionKey}-`));
      scratch.push(dir);
      const zipFile = join(dir, "code.zip");
      await writeFile(zipFile, zip);
      await refresh(functionKey, zipFile);
    },
    logs(functionKey) {
      return functionKey ? logLines.filter((l) => l.functionKey === functionKey) : [...logLines];
    },
    async close() {
      await Promise.all([...runtimes.values()].map((r) => r.close()));
      await Promise.all(scratch.map((d) => rm(d, { recursive: true, force: true })));
      await awsRequests?.close();
      for (const client of [cfn, s3, lambda, sqs]) client.destroy();
    },
  };
}

/** moto_server, the stack deployed to it, and this process's AWS environment pointed at it (the
 * operator commands and the stores run in the test process): the setup of the AWS-tier tests.
 * Teardown: stack.close(), then moto.stop(). */
export interface StackOnMoto {
  moto: Moto;
  stack: Stack;
}

export async function startStackOnMoto(options: DeployOptions = {}): Promise<StackOnMoto> {
  const moto = await startMoto();
  let stack: Stack;
  try {
    stack = await deployStack(moto, options);
  } catch (error) {
    await moto.stop();
    throw error;
  }
  Object.assign(process.env, awsEnv(moto.endpoint));
  return { moto, stack };
}
