// The packaged CloudFormation (what `serverless package` writes) against the design card
// (docs/cloud.md): every queue feeding a function has a dead-letter queue,
// every dead-letter queue an alarm, least-privilege IAM, a private encrypted bucket; and
// cfn-lint finds no error in it.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdtemp, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_REGION, ensurePackaged } from "./harness";
import { ROOT } from "./harness/package";

const STAGE = "dev";
const run = promisify(execFile);

interface Resource {
  Type: string;
  Properties?: Record<string, unknown>;
  DependsOn?: string[];
}
interface Template {
  Resources: Record<string, Resource>;
  Outputs?: Record<string, { Value: unknown }>;
}
type Props = Record<string, unknown>;

let dir: string;
let template: Template;

beforeAll(async () => {
  ({ dir } = await ensurePackaged(STAGE));
  template = JSON.parse(
    await readFile(join(dir, "cloudformation-template-update-stack.json"), "utf8"),
  ) as Template;
});

const ofType = (type: string) =>
  Object.entries(template.Resources).filter(([, r]) => r.Type === type) as [string, Resource][];
const props = (r: Resource | undefined) => (r?.Properties ?? {}) as Props;

/** The logical ID a `{"Fn::GetAtt": [id, attr]}` names (and checks attr). */
function getAtt(value: unknown, attr: string): string | undefined {
  const ga = (value as { "Fn::GetAtt"?: [string, string] } | undefined)?.["Fn::GetAtt"];
  return ga && ga[1] === attr ? ga[0] : undefined;
}

/** An intrinsic rendered as text: Ref/GetAtt become ${...}, Sub and Join are spelled out. */
function render(value: unknown): string {
  if (typeof value === "string") return value;
  const v = value as Record<string, unknown>;
  if (typeof v.Ref === "string") return `\${${v.Ref}}`;
  if (Array.isArray(v["Fn::GetAtt"])) return `\${${(v["Fn::GetAtt"] as string[]).join(".")}}`;
  if (typeof v["Fn::Sub"] === "string") return v["Fn::Sub"];
  if (Array.isArray(v["Fn::Sub"])) return String(v["Fn::Sub"][0]);
  if (Array.isArray(v["Fn::Join"])) {
    const [sep, parts] = v["Fn::Join"] as [string, unknown[]];
    return parts.map(render).join(sep);
  }
  return JSON.stringify(value);
}

const asArray = <T>(v: T | T[] | undefined): T[] =>
  v === undefined ? [] : Array.isArray(v) ? v : [v];

interface Statement {
  Effect: string;
  Action?: string | string[];
  NotAction?: unknown;
  Resource?: unknown;
  NotResource?: unknown;
}

/** Every statement of every identity policy in the template, with where it is. */
function identityStatements(): { where: string; statement: Statement }[] {
  const out: { where: string; statement: Statement }[] = [];
  for (const [id, role] of ofType("AWS::IAM::Role")) {
    for (const policy of asArray(
      props(role).Policies as { PolicyName: string; PolicyDocument: { Statement: Statement[] } }[],
    )) {
      for (const statement of asArray(policy.PolicyDocument.Statement)) {
        out.push({ where: `${id}/${policy.PolicyName}`, statement });
      }
    }
  }
  for (const type of ["AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"]) {
    for (const [id, policy] of ofType(type)) {
      const doc = props(policy).PolicyDocument as { Statement: Statement[] };
      for (const statement of asArray(doc.Statement)) out.push({ where: id, statement });
    }
  }
  return out;
}

describe("packaged template", () => {
  it("feeds every queue-fed function from a queue with a dead-letter queue", () => {
    const mappings = ofType("AWS::Lambda::EventSourceMapping");
    expect(mappings.map(([id]) => id).sort()).toEqual([
      "FinalizeEventSourceMappingSQSFinalizeQueue",
      "SchedulerEventSourceMappingSQSInstanceChecksQueue",
      "SyncWorkerEventSourceMappingSQSSyncJobsQueue",
    ]);
    for (const [id, mapping] of mappings) {
      const p = props(mapping);
      const queueId = getAtt(p.EventSourceArn, "Arn");
      const queue = queueId ? template.Resources[queueId] : undefined;
      expect(queue?.Type, `${id}: source`).toBe("AWS::SQS::Queue");
      const redrive = props(queue).RedrivePolicy as {
        deadLetterTargetArn: unknown;
        maxReceiveCount: number;
      };
      expect(redrive, `${queueId}: RedrivePolicy`).toBeDefined();
      const dlqId = getAtt(redrive.deadLetterTargetArn, "Arn");
      expect(dlqId && template.Resources[dlqId]?.Type, `${queueId}: dead-letter queue`).toBe(
        "AWS::SQS::Queue",
      );
      expect(redrive.maxReceiveCount).toBeGreaterThanOrEqual(1);
      expect(p.FunctionResponseTypes, `${id}`).toEqual(["ReportBatchItemFailures"]);
      expect(p.Enabled, `${id}`).toBe(true);
      // A message must stay invisible for at least one whole invocation.
      const fnId = getAtt(p.FunctionName, "Arn") as string;
      const timeout = props(template.Resources[fnId]).Timeout as number;
      expect(props(queue).VisibilityTimeout as number, `${queueId}`).toBeGreaterThanOrEqual(
        timeout,
      );
    }
    // One job a worker invocation (docs/cloud.md, "Tenants").
    const sync = props(template.Resources.SyncWorkerEventSourceMappingSQSSyncJobsQueue);
    expect(sync.BatchSize).toBe(1);
    expect(sync.ScalingConfig).toEqual({ MaximumConcurrency: 10 });
    expect(props(template.Resources.FinalizeEventSourceMappingSQSFinalizeQueue).BatchSize).toBe(1);
    const checks = props(template.Resources.SchedulerEventSourceMappingSQSInstanceChecksQueue);
    expect(checks.BatchSize).toBe(10);
    expect(checks.ScalingConfig).toEqual({ MaximumConcurrency: 10 });
  });

  it("gives finalize the ephemeral storage a 10,000,000-user snapshot needs in /tmp, and four vCPUs", () => {
    // About 0.32 MB per 1,000 users (bench/finalizeMemory.ts): 3.2 GB at 10,000,000, under half.
    const finalize = props(template.Resources.FinalizeLambdaFunction);
    expect(finalize.EphemeralStorage).toEqual({ Size: 10240 });
    // One vCPU a 1,769 MB: the main thread on one, three shard workers and the thread pool beside.
    expect(finalize.MemorySize).toBe(7076);
  });

  it("invokes the scheduler every 5 minutes", () => {
    const rules = ofType("AWS::Events::Rule");
    expect(rules).toHaveLength(1);
    const rule = props(rules[0]?.[1]);
    expect(rule.ScheduleExpression).toBe("rate(5 minutes)");
    expect(rule.State).toBe("ENABLED");
    const targets = rule.Targets as { Arn: unknown }[];
    expect(targets.map((t) => getAtt(t.Arn, "Arn"))).toEqual(["SchedulerLambdaFunction"]);
  });

  it("has an alarm on every dead-letter queue", () => {
    const dlqs = ofType("AWS::SQS::Queue")
      .map(
        ([, q]) =>
          (props(q).RedrivePolicy as { deadLetterTargetArn?: unknown } | undefined)
            ?.deadLetterTargetArn,
      )
      .filter(Boolean)
      .map((arn) => getAtt(arn, "Arn"));
    expect(dlqs.sort()).toEqual([
      "FinalizeDeadLetterQueue",
      "InstanceChecksDeadLetterQueue",
      "SyncJobsDeadLetterQueue",
    ]);
    for (const dlq of dlqs) {
      expect(props(template.Resources[dlq as string]).MessageRetentionPeriod).toBe(1_209_600);
      const alarms = ofType("AWS::CloudWatch::Alarm").filter(([, a]) =>
        asArray(props(a).Dimensions as { Name: string; Value: unknown }[]).some(
          (d) => d.Name === "QueueName" && getAtt(d.Value, "QueueName") === dlq,
        ),
      );
      expect(alarms, `alarm on ${dlq}`).toHaveLength(1);
      expect(props(alarms[0]?.[1])).toMatchObject({
        Namespace: "AWS/SQS",
        MetricName: "ApproximateNumberOfMessagesVisible",
        Threshold: 0,
        ComparisonOperator: "GreaterThanThreshold",
      });
    }
  });

  it("alarms on runs that end error or held, from the functions' metrics of this stage", () => {
    const alarms = Object.fromEntries(ofType("AWS::CloudWatch::Alarm"));
    for (const [id, metric] of [
      ["RunsFailedAlarm", "runsFailed"],
      ["RunsHeldAlarm", "runsHeld"],
    ] as const) {
      expect(props(alarms[id]), id).toMatchObject({
        AlarmName: `access-connectors-${STAGE}-${id === "RunsFailedAlarm" ? "runs-failed" : "runs-held"}`,
        Namespace: "AccessConnectors",
        MetricName: metric,
        Dimensions: [
          { Name: "service", Value: "access-connectors" },
          { Name: "stage", Value: STAGE },
        ],
        Statistic: "Sum",
        Threshold: 0,
        ComparisonOperator: "GreaterThanThreshold",
        TreatMissingData: "notBreaching",
      });
    }
  });

  it("notifies the stage's alarm topic from every alarm, and nothing when none is set", () => {
    const packaged = template as Template & {
      Parameters?: Record<string, { Type: string; Default?: string }>;
      Conditions?: Record<string, unknown>;
    };
    // Packaged without `--param alarmTopicArn=...`: empty, so the condition is false.
    expect(packaged.Parameters?.AlarmTopicArn).toMatchObject({ Type: "String", Default: "" });
    expect(packaged.Conditions?.HasAlarmTopic).toEqual({
      "Fn::Not": [{ "Fn::Equals": [{ Ref: "AlarmTopicArn" }, ""] }],
    });
    const actions = {
      "Fn::If": ["HasAlarmTopic", [{ Ref: "AlarmTopicArn" }], { Ref: "AWS::NoValue" }],
    };
    const alarms = ofType("AWS::CloudWatch::Alarm");
    expect(alarms).toHaveLength(5);
    for (const [id, alarm] of alarms) {
      expect(props(alarm).AlarmActions, id).toEqual(actions);
      expect(props(alarm).OKActions, id).toEqual(actions);
    }
  });

  it("has a dashboard of the stage's runs, queues and functions", () => {
    const [dashboard, ...others] = ofType("AWS::CloudWatch::Dashboard");
    expect(others).toHaveLength(0);
    expect(props(dashboard?.[1]).DashboardName).toBe(`access-connectors-${STAGE}`);
    const body = JSON.parse(props(dashboard?.[1]).DashboardBody as string) as {
      widgets: { type: string; width: number; properties: { title?: string; region?: string } }[];
    };
    const graphs = body.widgets.filter((w) => w.type === "metric");
    expect(graphs.map((w) => w.properties.title)).toEqual([
      "Runs by outcome",
      "Run duration (complete runs, ms)",
      "Jobs",
      "Upstream requests and 429s",
      "Dead-letter queues (messages)",
      "Function errors",
      "Function throttles",
      "Function duration (longest, ms)",
    ]);
    for (const w of graphs) expect(w.properties.region).toBe(DEFAULT_REGION);
    // CloudWatch's grid is 24 wide.
    for (const w of body.widgets) expect(w.width).toBeLessThanOrEqual(24);
  });

  it("runs every function on nodejs22.x, arm64, with its own role and the full environment", () => {
    const functions = ofType("AWS::Lambda::Function");
    expect(functions).toHaveLength(5);
    const roles = new Set<string>();
    const maxReceives = (
      props(template.Resources.SyncJobsQueue).RedrivePolicy as { maxReceiveCount: number }
    ).maxReceiveCount;
    for (const [id, fn] of functions) {
      const p = props(fn);
      expect(p.Runtime, id).toBe("nodejs22.x");
      expect(p.Architectures, id).toEqual(["arm64"]);
      expect(p.Handler, id).toBe("handler.handler");
      const role = getAtt(p.Role, "Arn");
      expect(role && template.Resources[role]?.Type, `${id}: role`).toBe("AWS::IAM::Role");
      roles.add(role as string);
      const env = (p.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(Object.keys(env).sort(), id).toEqual(
        [
          "STAGE",
          "INSTANCES_TABLE",
          "RUNS_TABLE",
          "IDEMPOTENCY_TABLE",
          "SHARDS_BUCKET",
          "SYNC_JOBS_QUEUE_URL",
          "FINALIZE_QUEUE_URL",
          "INSTANCE_CHECKS_QUEUE_URL",
          "SECRETS_PREFIX",
          "JOB_MAX_RECEIVES",
          "RUN_STALL_SECONDS",
          "INSTANCE_JOBS_IN_FLIGHT",
          "POWERTOOLS_SERVICE_NAME",
          "POWERTOOLS_METRICS_NAMESPACE",
          "POWERTOOLS_LOG_LEVEL",
          "NODE_OPTIONS",
          "MALLOC_ARENA_MAX",
          "MALLOC_MMAP_THRESHOLD_",
        ].sort(),
      );
      expect(env).toMatchObject({
        STAGE: STAGE,
        INSTANCES_TABLE: { Ref: "InstancesTable" },
        RUNS_TABLE: { Ref: "RunsTable" },
        IDEMPOTENCY_TABLE: { Ref: "IdempotencyTable" },
        SHARDS_BUCKET: { Ref: "ShardsBucket" },
        SYNC_JOBS_QUEUE_URL: { Ref: "SyncJobsQueue" },
        FINALIZE_QUEUE_URL: { Ref: "FinalizeQueue" },
        INSTANCE_CHECKS_QUEUE_URL: { Ref: "InstanceChecksQueue" },
        SECRETS_PREFIX: `access-connectors/${STAGE}/`,
        JOB_MAX_RECEIVES: String(maxReceives),
        RUN_STALL_SECONDS: "900",
        INSTANCE_JOBS_IN_FLIGHT: "8",
        POWERTOOLS_SERVICE_NAME: "access-connectors",
        POWERTOOLS_METRICS_NAMESPACE: "AccessConnectors",
        POWERTOOLS_LOG_LEVEL: "INFO",
        NODE_OPTIONS: "--enable-source-maps --max-semi-space-size=4",
        MALLOC_ARENA_MAX: "2",
        MALLOC_MMAP_THRESHOLD_: "131072",
      });
    }
    expect(roles.size).toBe(5);
    // No framework-made role shared by all functions.
    expect(template.Resources.IamRoleLambdaExecution).toBeUndefined();
  });

  it("grants named resources only", () => {
    const allowedWildcards = [
      /^\$\{ShardsBucket\.Arn\}\/runs\/\*$/,
      /^\$\{ShardsBucket\.Arn\}\/guard\/\*$/,
      new RegExp(`:secretsmanager:[^*]+:secret:access-connectors/${STAGE}/\\*$`),
      /:logs:[^*]+:log-group:\/aws\/lambda\/[^*:]+:\*$/,
    ];
    const statements = identityStatements();
    expect(statements.length).toBeGreaterThan(10);
    const problems: string[] = [];
    for (const { where, statement } of statements) {
      if (statement.NotAction || statement.NotResource)
        problems.push(`${where}: NotAction/NotResource`);
      for (const action of asArray(statement.Action)) {
        if (action.includes("*")) problems.push(`${where}: action ${action}`);
      }
      for (const resource of asArray(statement.Resource as unknown)) {
        const text = render(resource);
        if (text.includes("*") && !allowedWildcards.some((re) => re.test(text))) {
          problems.push(`${where}: resource ${text}`);
        }
      }
    }
    expect(problems).toEqual([]);
    // Each function may write only to its own log group.
    for (const [id, fn] of ofType("AWS::Lambda::Function")) {
      const role = getAtt(props(fn).Role, "Arn") as string;
      const logs = statements
        .filter((s) => s.where.startsWith(`${role}/`))
        .flatMap((s) => asArray(s.statement.Resource).map(render))
        .filter((r) => r.includes(":log-group:"));
      expect(logs, id).toEqual([
        `arn:\${AWS::Partition}:logs:\${AWS::Region}:\${AWS::AccountId}:log-group:/aws/lambda/${props(fn).FunctionName}:*`,
      ]);
    }
  });

  it("lets the settings function touch only the stage's secrets and registry, and start a first run", () => {
    const role = getAtt(props(template.Resources.SettingsLambdaFunction).Role, "Arn");
    expect(role).toBe("SettingsRole");
    const granted = identityStatements()
      .filter((s) => s.where.startsWith("SettingsRole/"))
      .flatMap(({ statement }) =>
        asArray(statement.Action).flatMap((action) =>
          asArray(statement.Resource as unknown).map((r) => `${action} ${render(r)}`),
        ),
      )
      .filter((grant) => !grant.startsWith("logs:"))
      .sort();
    const secrets = `arn:\${AWS::Partition}:secretsmanager:\${AWS::Region}:\${AWS::AccountId}:secret:access-connectors/${STAGE}/*`;
    const table = (id: string) => `\${${id}.Arn}`;
    expect(granted).toEqual(
      [
        ...["CreateSecret", "DeleteSecret", "GetSecretValue", "PutSecretValue"].map(
          (a) => `secretsmanager:${a} ${secrets}`,
        ),
        ...["GetItem", "UpdateItem", "DeleteItem"].map(
          (a) => `dynamodb:${a} ${table("InstancesTable")}`,
        ),
        ...["GetItem", "PutItem", "UpdateItem", "DeleteItem"].map(
          (a) => `dynamodb:${a} ${table("IdempotencyTable")}`,
        ),
        ...["PutItem", "BatchWriteItem"].map((a) => `dynamodb:${a} ${table("RunsTable")}`),
        `sqs:SendMessage ${table("SyncJobsQueue")}`,
      ].sort(),
    );
  });

  it("keeps the shard bucket encrypted, private, TLS-only, and expires runs/", () => {
    const bucket = props(template.Resources.ShardsBucket);
    const sse = (
      bucket.BucketEncryption as {
        ServerSideEncryptionConfiguration: {
          ServerSideEncryptionByDefault: { SSEAlgorithm: string };
        }[];
      }
    ).ServerSideEncryptionConfiguration;
    expect(["AES256", "aws:kms"]).toContain(sse[0]?.ServerSideEncryptionByDefault.SSEAlgorithm);
    expect(bucket.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    const rules = (bucket.LifecycleConfiguration as { Rules: Props[] }).Rules;
    expect(rules).toContainEqual(
      expect.objectContaining({ Status: "Enabled", Prefix: "runs/", ExpirationInDays: 7 }),
    );
    const policies = ofType("AWS::S3::BucketPolicy").filter(
      ([, p]) => (props(p).Bucket as { Ref?: string }).Ref === "ShardsBucket",
    );
    expect(policies).toHaveLength(1);
    const statements = (props(policies[0]?.[1]).PolicyDocument as { Statement: Props[] }).Statement;
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: "Deny",
        Condition: { Bool: { "aws:SecureTransport": "false" } },
      }),
    );
  });

  it("outputs what operator commands read, naming resources moto models", () => {
    const outputs = template.Outputs ?? {};
    const expected: Record<string, string> = {
      InstancesTableName: "InstancesTable",
      RunsTableName: "RunsTable",
      IdempotencyTableName: "IdempotencyTable",
      SyncJobsQueueUrl: "SyncJobsQueue",
      SyncJobsDeadLetterQueueUrl: "SyncJobsDeadLetterQueue",
      FinalizeQueueUrl: "FinalizeQueue",
      FinalizeDeadLetterQueueUrl: "FinalizeDeadLetterQueue",
      InstanceChecksQueueUrl: "InstanceChecksQueue",
      InstanceChecksDeadLetterQueueUrl: "InstanceChecksDeadLetterQueue",
      ShardsBucketName: "ShardsBucket",
      SchedulerFunctionName: "SchedulerLambdaFunction",
      SyncWorkerFunctionName: "SyncWorkerLambdaFunction",
      FinalizeFunctionName: "FinalizeLambdaFunction",
      ActionFunctionName: "ActionLambdaFunction",
      SettingsFunctionName: "SettingsLambdaFunction",
    };
    for (const [name, ref] of Object.entries(expected)) {
      expect(outputs[name]?.Value, name).toEqual({ Ref: ref });
    }
    expect(outputs.SettingsFunctionArn?.Value).toEqual({
      "Fn::GetAtt": ["SettingsLambdaFunction", "Arn"],
    });
    expect(outputs.SecretsPrefix?.Value).toBe(`access-connectors/${STAGE}/`);
  });

  it("passes cfn-lint without errors", async () => {
    const onPath = (process.env.PATH ?? "")
      .split(delimiter)
      .some((d) => d !== "" && existsSync(join(d, "cfn-lint")));
    if (!onPath) {
      throw new Error(
        "cfn-lint is required for the packaging tests and was not found on PATH. " +
          "Install it with: pip install cfn-lint (then check `cfn-lint --version`).",
      );
    }
    const files = [
      join(dir, "cloudformation-template-create-stack.json"),
      join(dir, "cloudformation-template-update-stack.json"),
    ];
    // Exit status is a bit mask of the levels found (2 error, 4 warning, 8 informational).
    const output = await run("cfn-lint", ["--format", "json", ...files], {
      maxBuffer: 16 * 1024 * 1024,
    }).then(
      (r) => r.stdout,
      (e: { stdout?: string; message: string }) => {
        if (!e.stdout) throw new Error(`cfn-lint failed: ${e.message}`);
        return e.stdout;
      },
    );
    const findings = JSON.parse(output) as {
      Level: string;
      Rule: { Id: string };
      Message: string;
      Filename: string | null;
    }[];
    const line = (f: (typeof findings)[number]) => `${f.Rule.Id} ${f.Message}`;
    expect(findings.filter((f) => f.Level === "Error").map(line)).toEqual([]);
    // Warnings fail too, but one: the framework adds DependsOn on a function's own role (which
    // its GetAtt already implies) when `role:` names a role of the template.
    const unexpected = findings
      .filter((f) => f.Level === "Warning")
      .filter(
        (f) =>
          !(
            f.Rule.Id === "W3005" &&
            /^'\w+Role' dependency already enforced by a 'GetAtt' at 'Resources\/\w+LambdaFunction\/Properties\/Role'$/.test(
              f.Message,
            )
          ),
      );
    expect(unexpected.map(line)).toEqual([]);
  });
});

describe("serverless package from a fresh checkout", () => {
  it("bundles the functions itself (the local plugin) before it packages them", async () => {
    // A checkout with no .build/: only what a clone holds, and the installed node_modules.
    const checkout = await mkdtemp(join(tmpdir(), "ac-fresh-package-"));
    try {
      const copied = [
        "serverless.yml",
        "package.json",
        "tsconfig.json",
        "infra",
        "lib",
        "functions",
        "scripts",
      ];
      for (const path of copied) {
        await cp(join(ROOT, path), join(checkout, path), { recursive: true });
      }
      await symlink(join(ROOT, "node_modules"), join(checkout, "node_modules"), "dir");
      const env = { ...process.env };
      delete env.ACCESS_CONNECTORS_PREBUNDLED;
      const { stdout, stderr } = await run(
        process.execPath,
        [join(ROOT, "node_modules", "osls", "bin", "serverless.js"), "package", "--stage", "x"],
        { cwd: checkout, env, maxBuffer: 16 * 1024 * 1024 },
      );
      expect(`${stdout}${stderr}`).toMatch(/bundled \.build\/functions\/syncWorker\.zip/);
      const packaged = JSON.parse(
        await readFile(
          join(checkout, ".serverless", "cloudformation-template-update-stack.json"),
          "utf8",
        ),
      ) as { Resources: Record<string, { Type: string; Properties?: { Code?: unknown } }> };
      const functions = Object.values(packaged.Resources).filter(
        (r) => r.Type === "AWS::Lambda::Function",
      );
      expect(functions).toHaveLength(5);
      for (const key of ["scheduler", "syncWorker", "finalize", "action", "settings"]) {
        expect(existsSync(join(checkout, ".build", "functions", `${key}.zip`))).toBe(true);
      }
    } finally {
      await rm(checkout, { recursive: true, force: true });
    }
  });
});
