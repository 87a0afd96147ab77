import { randomUUID } from "node:crypto";
import * as z from "zod";
import type { ActionReply, ReplyMemory } from "../../actions";
import { connectorIdSchema, InstanceRegistry, type StartAnswer, secretName } from "../../cloud";
import { type FunctionInvoker, lambdaInvoker } from "../../cloud/aws/invoker";
import { MAX_RUN_HISTORY, recentRuns } from "../../cloud/aws/runHistory";
import type { RunItem } from "../../cloud/aws/runItem";
import { readStackOutputs } from "../../cloud/aws/stack";
import { pickInstanceSettings } from "../../cloud/instanceSettings";
import {
  answerSettings,
  instanceSummary,
  type SaveResult,
  type SettingsReply,
  type SettingsRequest,
} from "../../cloud/settings";
import type { Environment } from "../../config";
import { parseConnectorName } from "../../connectors";
import { ConfigError, ConnectorError, ExitCode, UsageError } from "../../errors";
import { silentLogger } from "../../logging";
import type { CliIo } from "../io";
import { printReply } from "./action";

/** The operator commands of docs/cloud.md; they find the stage from its stack's outputs. */
export interface CloudOptions {
  stage: string;
  region?: string;
  /** How functions are invoked: Lambda's Invoke by default; tests pass their own. */
  invoke?: FunctionInvoker;
}

/**
 * `cloud put-instance`: a `save` of docs/settings.md, carried out here by the code the
 * settings function runs: the variables read from `env` as `sync` reads them (`<NAME>_FILE`
 * resolved here), checked before anything is written (a mistake exits 2 naming each variable),
 * then the secret, the registry row, and the first sync started by the scheduler.
 */
export async function putInstance(
  io: CliIo,
  env: Environment,
  args: { connectorId: string; connector: string; interval: string; sync: boolean },
  options: CloudOptions,
): Promise<void> {
  const connectorId = parseConnectorId(args.connectorId);
  const connector = parseConnectorName(args.connector);
  const settings = pickInstanceSettings(connector, env);
  const { stack, answer } = await settingsHere(options, {
    op: "save",
    connectorId,
    connector,
    settings,
    interval: args.interval,
    sync: args.sync,
  });
  const saved = succeeded<SaveResult>(answer);
  io.stdout.write(
    `${connectorId}: ${connector} instance saved on stage ${options.stage} (secret ${secretName(stack.secretsPrefix, connectorId)}, every ${saved.interval})\n`,
  );
  if (saved.sync) io.stdout.write(`${JSON.stringify(saved.sync)}\n`);
}

/** `cloud list`: each instance's summary (as `get` gives it), or its registry row as JSON. */
export async function listInstances(io: CliIo, options: CloudOptions & { json?: boolean }) {
  useRegion(options);
  const stack = await readStackOutputs(options.stage, options.region);
  const rows = await new InstanceRegistry(stack.instancesTable).list();
  if (options.json) {
    for (const row of rows) io.stdout.write(`${JSON.stringify(row)}\n`);
    return;
  }
  if (rows.length === 0) {
    io.stdout.write(
      `no instances on stage ${options.stage}; add one with \`cloud put-instance\`\n`,
    );
    return;
  }
  for (const summary of rows.map(instanceSummary)) {
    const { currentRun, lastRun } = summary;
    const run = currentRun
      ? `syncing ${currentRun.syncId}`
      : `last ${lastRun?.status ?? "never"}${lastRun?.at ? ` at ${lastRun.at}` : ""}`;
    const detail = summary.labelDetail ? ` (${summary.labelDetail})` : "";
    io.stdout.write(
      `${summary.connectorId}\t${summary.connector}\t${summary.label}${detail}\t${run}\n`,
    );
  }
}

/**
 * `cloud runs <connectorId>`: the instance's last runs from the runs table, newest first (kept
 * 14 days): a header and one tab-separated line a run, or one JSON object a line.
 */
export async function listRuns(
  io: CliIo,
  connectorIdArg: string,
  options: CloudOptions & { limit: string; json?: boolean },
): Promise<void> {
  const connectorId = parseConnectorId(connectorIdArg);
  const limit = parseLimit(options.limit);
  useRegion(options);
  const stack = await readStackOutputs(options.stage, options.region);
  const runs = (await recentRuns(stack.runsTable, connectorId, limit)).map(runView);
  if (options.json) {
    for (const run of runs) io.stdout.write(`${JSON.stringify(run)}\n`);
    return;
  }
  if (runs.length === 0) {
    io.stdout.write(
      `${connectorId}: no runs on stage ${options.stage} in the last 14 days; start one with \`cloud sync ${connectorId}\`\n`,
    );
    return;
  }
  io.stdout.write("started\tended\tstatus\tjobs\trecords\trequests\t429s\tsyncId\treason\n");
  for (const run of runs) {
    const cells = [run.startedAt, run.finishedAt ?? "-", run.status, run.jobs, run.records];
    // One line a run: a reason that quotes an upstream's multi-line answer is put on one.
    cells.push(run.requests, run.upstream429s, run.syncId, (run.reason ?? "").replace(/\s+/g, " "));
    io.stdout.write(`${cells.join("\t")}\n`);
  }
}

/** What `cloud runs` shows of a run item (not its bookkeeping: leases, outstanding count). */
function runView(run: RunItem) {
  return {
    syncId: run.syncId,
    connector: run.connector,
    status: run.status,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    jobs: run.jobsDone,
    records: run.records,
    requests: run.requests,
    upstream429s: run.upstream429s ?? 0,
    reason: run.error,
  };
}

const limitSchema = z.coerce.number().int().min(1).max(MAX_RUN_HISTORY);

function parseLimit(value: string): number {
  const parsed = limitSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new UsageError(`--limit "${value}": give a whole number from 1 to ${MAX_RUN_HISTORY}`);
}

/**
 * `cloud remove`: a `remove` of docs/settings.md carried out here: refused (exit 1) while a
 * run is in flight unless `--force`; an id with nothing to remove says so and exits 0.
 */
export async function removeInstance(
  io: CliIo,
  connectorIdArg: string,
  options: CloudOptions & { force?: boolean },
) {
  const connectorId = parseConnectorId(connectorIdArg);
  const { answer } = await settingsHere(options, {
    op: "remove",
    connectorId,
    force: options.force ?? false,
  });
  if (answer.status === "failed" && answer.error.code === "not_found") {
    io.stdout.write(
      `${connectorId}: no such instance on stage ${options.stage}; nothing to remove\n`,
    );
    return;
  }
  succeeded(answer);
  io.stdout.write(`${connectorId}: removed (registry row and secret)\n`);
}

export async function syncInstance(io: CliIo, connectorIdArg: string, options: CloudOptions) {
  const connectorId = parseConnectorId(connectorIdArg);
  useRegion(options);
  const stack = await readStackOutputs(options.stage, options.region);
  await startSync(io, connectorId, options, stack.schedulerFunctionName);
}

/**
 * `cloud release <connectorId>`: the scheduler publishes the snapshot the removal guard holds for
 * the instance, as it is. Exit 0 when released, 2 when nothing is held.
 */
export async function releaseInstance(
  io: CliIo,
  connectorIdArg: string,
  options: CloudOptions,
): Promise<number> {
  const connectorId = parseConnectorId(connectorIdArg);
  useRegion(options);
  const stack = await readStackOutputs(options.stage, options.region);
  const answer = (await invoker(options)(stack.schedulerFunctionName, {
    connectorId,
    release: true,
  })) as { status?: string; detail?: string };
  io.stdout.write(`${JSON.stringify(answer)}\n`);
  if (answer.status === "released") return ExitCode.ok;
  io.stderr.write(`error: ${answer.detail ?? "the scheduler did not release it"}\n`);
  return ExitCode.usage;
}

/** Sends one action request to the action function; returns the exit code its reply calls for. */
export async function cloudAction(
  io: CliIo,
  request: {
    connectorId: string;
    action: string;
    args: Record<string, string | undefined>;
    requestId?: string;
  },
  options: CloudOptions,
): Promise<number> {
  useRegion(options);
  const stack = await readStackOutputs(options.stage, options.region);
  const event = {
    requestId: request.requestId ?? randomUUID(),
    connectorId: request.connectorId,
    action: request.action,
    args: Object.fromEntries(Object.entries(request.args).filter(([, v]) => v !== undefined)),
  };
  const reply = (await invoker(options)(stack.actionFunctionName, event)) as ActionReply;
  return printReply(io, reply);
}

async function startSync(
  io: CliIo,
  connectorId: string,
  options: CloudOptions,
  functionName: string,
) {
  const answer = await invoker(options)(functionName, { connectorId });
  io.stdout.write(`${JSON.stringify(answer)}\n`);
}

/**
 * `--region` is the AWS SDK's region for everything the command touches (the stack, the secret,
 * the registry, the invoke), as if AWS_REGION were set.
 */
function useRegion(options: CloudOptions): void {
  if (options.region) process.env.AWS_REGION = options.region;
}

/** A settings request without its id (each command run makes one). */
type SettingsRequestBody<R = SettingsRequest> = R extends SettingsRequest
  ? Omit<R, "requestId">
  : never;

/** The operator commands remember no reply: each run sends a fresh requestId. */
const NO_MEMORY: ReplyMemory<SettingsRequest, SettingsReply> = { once: (_request, run) => run() };

/**
 * Carries out a settings request in this process on the stage's resources (the settings
 * function's code; a first sync is started by invoking the scheduler).
 */
async function settingsHere(options: CloudOptions, request: SettingsRequestBody) {
  useRegion(options);
  const stack = await readStackOutputs(options.stage, options.region);
  const answer = await answerSettings(
    { ...request, requestId: randomUUID() },
    {
      stage: {
        instancesTable: stack.instancesTable,
        secretsPrefix: stack.secretsPrefix,
        startSync: async (connectorId) =>
          (await invoker(options)(stack.schedulerFunctionName, { connectorId })) as StartAnswer,
      },
      memory: NO_MEMORY,
      logger: silentLogger,
    },
  );
  return { stack, answer };
}

/**
 * The result of a succeeded reply; otherwise the error the command line exits with: the fields
 * at fault as a ConfigError (exit 2, "VARIABLE: what is wrong; how to fix it" as `sync` says it),
 * a failure with its message (exit 1).
 */
function succeeded<Result>(answer: SettingsReply): Result {
  if (answer.status === "succeeded") return answer.result as Result;
  if (answer.status === "invalid") {
    throw new ConfigError(
      answer.errors.map((e) => ({
        variable: e.field,
        message: e.fix === e.message ? e.message : `${e.message}; ${e.fix}`,
      })),
    );
  }
  throw new ConnectorError(`${answer.error.code}: ${answer.error.message}`);
}

function invoker(options: CloudOptions): FunctionInvoker {
  return options.invoke ?? lambdaInvoker(options.region);
}

function parseConnectorId(value: string): string {
  const parsed = connectorIdSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new UsageError(`connector id "${value}": ${parsed.error.issues[0]?.message}`);
}
