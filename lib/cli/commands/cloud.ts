import { randomUUID } from "node:crypto";
import * as z from "zod";
import type { ActionReply } from "../../actions";
import {
  collectInstanceSettings,
  connectorIdSchema,
  deleteInstanceSecret,
  InstanceRegistry,
  secretName,
  writeInstanceSecret,
} from "../../cloud";
import { type FunctionInvoker, lambdaInvoker } from "../../cloud/aws/invoker";
import { MAX_RUN_HISTORY, recentRuns } from "../../cloud/aws/runHistory";
import type { RunItem } from "../../cloud/aws/runItem";
import { readStackOutputs } from "../../cloud/aws/stack";
import type { Environment } from "../../config";
import { blankToUndefined } from "../../config/environment";
import { parseConnectorName } from "../../connectors";
import { ExitCode, UsageError } from "../../errors";
import { MAX_REMOVAL_VARIABLE, parseRemovalLimit } from "../../guard";
import { parseInterval } from "../../platform";
import type { CliIo } from "../io";
import { printReply } from "./action";

/** The operator commands of docs/cloud.md; they find the stage from its stack's outputs. */
export interface CloudOptions {
  stage: string;
  region?: string;
  /** How functions are invoked: Lambda's Invoke by default; tests pass their own. */
  invoke?: FunctionInvoker;
}

export async function putInstance(
  io: CliIo,
  env: Environment,
  args: { connectorId: string; connector: string; interval: string; sync: boolean },
  options: CloudOptions,
): Promise<void> {
  // Everything is checked before anything is written: a mistake exits 2 and changes nothing.
  const connectorId = parseConnectorId(args.connectorId);
  const connector = parseConnectorName(args.connector);
  const intervalSeconds = Math.round(parseInterval(args.interval) / 1000);
  const settings = collectInstanceSettings(connector, env);
  const limit = blankToUndefined(env[MAX_REMOVAL_VARIABLE])?.trim();
  if (limit !== undefined) {
    parseRemovalLimit(limit, MAX_REMOVAL_VARIABLE);
    settings[MAX_REMOVAL_VARIABLE] = limit;
  }
  useRegion(options);
  const stack = await readStackOutputs(options.stage, options.region);
  const secret = secretName(stack.secretsPrefix, connectorId);
  await writeInstanceSecret(secret, settings);
  await new InstanceRegistry(stack.instancesTable).register({
    connectorId,
    connector,
    intervalSeconds,
  });
  io.stdout.write(
    `${connectorId}: ${connector} instance saved on stage ${options.stage} (secret ${secret}, every ${args.interval})\n`,
  );
  if (args.sync) await startSync(io, connectorId, options, stack.schedulerFunctionName);
}

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
  for (const row of rows) {
    const run = row.currentSyncId
      ? `syncing ${row.currentSyncId}`
      : `last ${row.lastSyncStatus ?? "never"}${row.lastSyncAt ? ` at ${row.lastSyncAt}` : ""}`;
    const detail = row.labelDetail ? ` (${row.labelDetail})` : "";
    io.stdout.write(`${row.connectorId}\t${row.connector}\t${row.label}${detail}\t${run}\n`);
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

export async function removeInstance(io: CliIo, connectorIdArg: string, options: CloudOptions) {
  const connectorId = parseConnectorId(connectorIdArg);
  useRegion(options);
  const stack = await readStackOutputs(options.stage, options.region);
  const existed = await new InstanceRegistry(stack.instancesTable).remove(connectorId);
  await deleteInstanceSecret(secretName(stack.secretsPrefix, connectorId)).catch((error) => {
    if ((error as { name?: string }).name !== "ResourceNotFoundException") throw error;
  });
  io.stdout.write(
    existed
      ? `${connectorId}: removed (registry row and secret)\n`
      : `${connectorId}: no such instance on stage ${options.stage}; nothing to remove\n`,
  );
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

function invoker(options: CloudOptions): FunctionInvoker {
  return options.invoke ?? lambdaInvoker(options.region);
}

function parseConnectorId(value: string): string {
  const parsed = connectorIdSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new UsageError(`connector id "${value}": ${parsed.error.issues[0]?.message}`);
}
