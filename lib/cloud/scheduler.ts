import * as z from "zod";
import { ConfigError, messageOf } from "../errors";
import { parseJsonOrUndefined } from "../parseJson";
import { SyncDeadlineError } from "../sync";
import { instanceCheckMessage, sendInstanceChecks } from "./aws/instanceChecks";
import { InstanceRegistry, type InstanceRow, isDue } from "./aws/instances";
import { sendFinalize } from "./aws/messages";
import type { RunItem } from "./aws/runItem";
import { FINALIZE_ATTEMPTS, FINALIZE_LEASE_SECONDS } from "./aws/runs";
import type { CloudConfig } from "./config";
import { openInstance } from "./instanceRuntime";
import { connectorIdSchema } from "./instanceSettings";
import { failRun, type ReleaseAnswer, releaseHeld, type StartAnswer, startRun } from "./lifecycle";
import type { Telemetry } from "./observability";
import { RunFlow } from "./runFlow";
import { sendInOrder, sweepOrder } from "./sweepPlan";

/** A direct invoke: sync this instance now (how the platform and `cloud sync` ask). */
export const syncNowRequest = z.object({ connectorId: connectorIdSchema }).strict();

/** A direct invoke: publish the snapshot the removal guard holds for this instance, as it is. */
export const releaseRequest = z
  .object({ connectorId: connectorIdSchema, release: z.literal(true) })
  .strict();

/** An EventBridge scheduled event (only its shape matters: it carries no instance). */
const scheduledEvent = z.object({ "detail-type": z.literal("Scheduled Event") }).loose();

export interface SweepAnswer {
  /** Due instances sent to be started, the most overdue first. */
  starts: string[];
  /** Instances with a current run, sent to have it looked at (stalled, late, its finalizer lost). */
  checks: string[];
  /** Instances not sent before the sweep's deadline: the next sweep sends them first. */
  left: string[];
  failed: { connectorId: string; error: string }[];
}

/**
 * The sweep stops sending this long before its invocation's end, so a send it started has
 * time to finish; the SDK's sends to SQS answer in milliseconds.
 */
const SWEEP_MARGIN_MS = 10_000;

/** Batches of checks a sweep has in flight at once. */
const SWEEP_SENDS_IN_FLIGHT = 8;

/** Lambda's SQS event on the instance-checks queue (its records are parsed one by one). */
export const instanceChecksEvent = z
  .object({ Records: z.array(z.object({ eventSource: z.literal("aws:sqs") }).loose()).min(1) })
  .loose();

/**
 * The scheduler's direct invokes and its schedule, told apart by the event's shape (its queue's
 * events go to `checkInstances`). `remainingMs`: the invocation's time left, which bounds a sweep.
 */
export async function schedule(
  event: unknown,
  config: CloudConfig,
  telemetry: Telemetry,
  remainingMs = 60_000,
): Promise<StartAnswer | SweepAnswer | ReleaseAnswer> {
  const direct = syncNowRequest.safeParse(event);
  if (direct.success) return startRun(config, direct.data.connectorId, telemetry);
  const release = releaseRequest.safeParse(event);
  if (release.success) return releaseHeld(config, release.data.connectorId, telemetry);
  if (scheduledEvent.safeParse(event).success) {
    return sweep(config, telemetry, Date.now() + remainingMs - SWEEP_MARGIN_MS);
  }
  throw new ConfigError([
    {
      variable: "event",
      message:
        'the scheduler takes {"connectorId": "<id>"} (sync that instance now), {"connectorId": "<id>", "release": true} (publish its held snapshot) or an EventBridge scheduled event',
    },
  ]);
}

/**
 * The schedule: sends every instance that is due, the most overdue first, and every instance
 * with a current run to the instance-checks queue, ten to a message, whose messages the scheduler
 * takes (`checkInstances`) as many at once as its event source mapping allows. The sweep itself
 * only reads the registry and sends (10,000 instances are 100 SendMessageBatch requests); it stops
 * sending at `deadlineAt`, and the rest go next sweep, first.
 */
export async function sweep(
  config: CloudConfig,
  telemetry: Telemetry,
  deadlineAt: number,
): Promise<SweepAnswer> {
  const began = performance.now();
  const rows = await new InstanceRegistry(config.instancesTable).list();
  const listMs = Math.round(performance.now() - began);
  const { starts, checks } = sweepOrder(rows, new Date());
  const outcome = await sendInOrder(
    [...starts, ...checks],
    (batch) => sendInstanceChecks(config.instanceChecksQueueUrl, batch),
    { deadlineAt, inFlight: SWEEP_SENDS_IN_FLIGHT },
  );
  const sent = new Set(outcome.sent);
  const failed = outcome.failed;
  for (const { connectorId, error } of failed) {
    telemetry.logger.error("cannot send an instance check", { connectorId, error });
  }
  const answer = {
    starts: starts.filter((id) => sent.has(id)),
    checks: checks.filter((id) => sent.has(id)),
    left: outcome.left,
    failed,
  };
  const counts = {
    instances: rows.length,
    starts: answer.starts.length,
    checks: answer.checks.length,
    left: answer.left.length,
    failed: failed.length,
    listMs,
    sendMs: Math.round(performance.now() - began) - listMs,
  };
  if (answer.left.length > 0) {
    telemetry.logger.warn("sweep deadline reached; the rest go next sweep, first", counts);
  } else {
    telemetry.logger.info("sweep done", counts);
  }
  return answer;
}

/**
 * One message of the instance-checks queue: its instances looked at one after another
 * (`checkInstance`). An error of one does not stop the others; the first is thrown once all were
 * looked at, so the queue delivers the message again, and a check repeated finds its instance as
 * it is (started, or its run looked at). A message of another shape is dropped.
 */
export async function checkInstances(
  body: string,
  config: CloudConfig,
  telemetry: Telemetry,
): Promise<CheckOutcome[]> {
  const parsed = instanceCheckMessage.safeParse(parseJsonOrUndefined(body));
  if (!parsed.success) {
    telemetry.logger.error("not an instance check, dropped", { error: parsed.error.message });
    return [];
  }
  const outcomes: CheckOutcome[] = [];
  let failure: { error: unknown } | undefined;
  for (const connectorId of parsed.data.connectorIds) {
    try {
      outcomes.push(await checkInstance(connectorId, config, telemetry));
    } catch (error) {
      telemetry.logger.error("instance check failed; its message will be delivered again", {
        connectorId,
        error: messageOf(error),
      });
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
  return outcomes;
}

type CheckOutcome = "started" | "stalled" | "unchanged";

/**
 * What the sweep used to do for one instance, with the row read again (a check that comes late,
 * or twice, finds the instance as it is now). A current run that made no progress for
 * `runStallSeconds`, or is past its deadline, ends `error`; a due instance starts. Settings that
 * cannot work put the instance's label at `error` (in `startRun`) and are not retried.
 */
async function checkInstance(
  connectorId: string,
  config: CloudConfig,
  telemetry: Telemetry,
): Promise<CheckOutcome> {
  const row = await new InstanceRegistry(config.instancesTable).get(connectorId);
  const now = new Date();
  if (row?.currentSyncId) {
    const stalled = await settleCurrentRun(config, row, row.currentSyncId, now, telemetry);
    return stalled ? "stalled" : "unchanged";
  }
  if (!row || !isDue(row, now)) return "unchanged";
  try {
    const answer = await startRun(config, connectorId, telemetry, row);
    return answer.status === "started" ? "started" : "unchanged";
  } catch (error) {
    if (!ConfigError.is(error)) throw error;
    telemetry.logger.error("cannot start a scheduled sync", {
      connectorId,
      error: messageOf(error),
    });
    return "unchanged";
  }
}

/**
 * Looks at an instance's current run: one that made no progress for `runStallSeconds` (its
 * workers or finalizer gone) ends `error`; one that ended without releasing the instance (its
 * finalizer died between the two writes) releases it. True when the run was stalled.
 */
async function settleCurrentRun(
  config: CloudConfig,
  row: InstanceRow,
  syncId: string,
  now: Date,
  telemetry: Telemetry,
): Promise<boolean> {
  const { connectorId } = row;
  const registry = new InstanceRegistry(config.instancesTable);
  const run = await new RunFlow(config).get(syncId);
  if (run?.status === "complete") {
    await registry.endRun(connectorId, syncId, { status: "complete", startedAt: run.startedAt });
    return false;
  }
  if (run?.status === "held") {
    // Held by the guard, the finalizer gone before it released the instance: it is not current.
    await registry.endRun(connectorId, syncId, {
      status: "error",
      startedAt: run.startedAt,
      detail: run.error,
    });
    return false;
  }
  if (run?.status === "finalizing") return settleFinalizing(config, run, now, telemetry);
  const quietMs = run ? now.getTime() - Date.parse(run.lastProgressAt) : Number.POSITIVE_INFINITY;
  const overdue = run?.status === "error" ? undefined : await pastDeadline(config, run, row, now);
  if (run?.status !== "error" && quietMs <= config.runStallSeconds * 1000 && !overdue) return false;
  const reason =
    run?.error ??
    overdue ??
    `the run made no progress for ${Math.round(quietMs / 1000)} s (limit ${config.runStallSeconds} s); nothing was uploaded, and the next sync starts on schedule`;
  const startedAt = run?.startedAt ?? now.toISOString();
  await failRun(config, { syncId, connectorId, startedAt }, reason, telemetry);
  // failRun releases the instance when it ends the run; a run ended earlier is released here.
  await registry.endRun(connectorId, syncId, { status: "error", startedAt, detail: reason });
  return true;
}

/**
 * A finalizer that held a run past its lease died (a finalize never outlives its timeout, which
 * is shorter than the lease): the run is handed to a new finalizer, whose upload repeats the same
 * PUT, until it has been tried `FINALIZE_ATTEMPTS` times; then it ends `error`.
 */
async function settleFinalizing(
  config: CloudConfig,
  run: RunItem,
  now: Date,
  telemetry: Telemetry,
): Promise<boolean> {
  const heldMs = now.getTime() - Date.parse(run.finalizeLeaseAt ?? run.lastProgressAt);
  if (heldMs <= FINALIZE_LEASE_SECONDS * 1000) return false;
  if ((run.finalizeAttempts ?? 0) < FINALIZE_ATTEMPTS) {
    telemetry.logger.warn("finalizer lost; finalize requested again", { syncId: run.syncId });
    await sendFinalize(config.finalizeQueueUrl, { syncId: run.syncId });
    return false;
  }
  const reason = `the snapshot could not be published in ${FINALIZE_ATTEMPTS} attempts; see the finalize function's logs, then start a new sync`;
  await failRun(config, run, reason, telemetry);
  await new InstanceRegistry(config.instancesTable).endRun(run.connectorId, run.syncId, {
    status: "error",
    startedAt: run.startedAt,
    detail: reason,
  });
  return true;
}

/**
 * A run older than its instance's sync deadline (CONNECTOR_<APP>_SYNC_DEADLINE) ends as a local
 * sync does at its deadline, with the same reason. Unreadable settings leave it to the stall check.
 */
async function pastDeadline(
  config: CloudConfig,
  run: RunItem | undefined,
  row: InstanceRow,
  now: Date,
): Promise<string | undefined> {
  if (!run) return undefined;
  const deadline = await openInstance(config, run.connectorId, { row }).then(
    (instance) => instance.loaded.connector.syncDeadline,
    () => undefined,
  );
  if (!deadline || now.getTime() - Date.parse(run.startedAt) <= deadline.value) return undefined;
  return `${new SyncDeadlineError(deadline).message}; the next sync starts on schedule`;
}
