import * as z from "zod";
import { ConfigError, messageOf } from "../errors";
import { SyncDeadlineError } from "../sync";
import { InstanceRegistry, isDue } from "./aws/instances";
import { sendFinalize } from "./aws/messages";
import type { RunItem } from "./aws/runItem";
import { FINALIZE_ATTEMPTS, FINALIZE_LEASE_SECONDS } from "./aws/runs";
import type { CloudConfig } from "./config";
import { openInstance } from "./instanceRuntime";
import { connectorIdSchema } from "./instanceSettings";
import { failRun, type ReleaseAnswer, releaseHeld, type StartAnswer, startRun } from "./lifecycle";
import type { Telemetry } from "./observability";
import { RunFlow } from "./runFlow";

/** A direct invoke: sync this instance now (how the platform and `cloud sync` ask). */
export const syncNowRequest = z.object({ connectorId: connectorIdSchema }).strict();

/** A direct invoke: publish the snapshot the removal guard holds for this instance, as it is. */
export const releaseRequest = z
  .object({ connectorId: connectorIdSchema, release: z.literal(true) })
  .strict();

/** An EventBridge scheduled event (only its shape matters: it carries no instance). */
const scheduledEvent = z.object({ "detail-type": z.literal("Scheduled Event") }).loose();

export interface SweepAnswer {
  started: StartAnswer[];
  stalled: string[];
  failed: { connectorId: string; error: string }[];
}

/** The scheduler's two entry points, told apart by the event's shape. */
export async function schedule(
  event: unknown,
  config: CloudConfig,
  telemetry: Telemetry,
): Promise<StartAnswer | SweepAnswer | ReleaseAnswer> {
  const direct = syncNowRequest.safeParse(event);
  if (direct.success) return startRun(config, direct.data.connectorId, telemetry);
  const release = releaseRequest.safeParse(event);
  if (release.success) return releaseHeld(config, release.data.connectorId, telemetry);
  if (scheduledEvent.safeParse(event).success) return sweep(config, telemetry);
  throw new ConfigError([
    {
      variable: "event",
      message:
        'the scheduler takes {"connectorId": "<id>"} (sync that instance now), {"connectorId": "<id>", "release": true} (publish its held snapshot) or an EventBridge scheduled event',
    },
  ]);
}

/**
 * The schedule: ends runs that made no progress for `runStallSeconds`, then starts every
 * instance that is due. One instance's failure does not stop the others.
 */
export async function sweep(config: CloudConfig, telemetry: Telemetry): Promise<SweepAnswer> {
  const registry = new InstanceRegistry(config.instancesTable);
  const answer: SweepAnswer = { started: [], stalled: [], failed: [] };
  const now = new Date();
  for (const row of await registry.list()) {
    try {
      if (row.currentSyncId) {
        if (await settleCurrentRun(config, row.connectorId, row.currentSyncId, now, telemetry)) {
          answer.stalled.push(row.connectorId);
        }
        continue;
      }
      if (isDue(row, now)) answer.started.push(await startRun(config, row.connectorId, telemetry));
    } catch (error) {
      const message = messageOf(error);
      telemetry.logger.error("cannot start a scheduled sync", {
        connectorId: row.connectorId,
        error: message,
      });
      answer.failed.push({ connectorId: row.connectorId, error: message });
    }
  }
  return answer;
}

/**
 * Looks at an instance's current run: one that made no progress for `runStallSeconds` (its
 * workers or finalizer gone) ends `error`; one that ended without releasing the instance (its
 * finalizer died between the two writes) releases it. True when the run was stalled.
 */
async function settleCurrentRun(
  config: CloudConfig,
  connectorId: string,
  syncId: string,
  now: Date,
  telemetry: Telemetry,
): Promise<boolean> {
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
  const overdue = run?.status === "error" ? undefined : await pastDeadline(config, run, now);
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
  now: Date,
): Promise<string | undefined> {
  if (!run) return undefined;
  const deadline = await openInstance(config, run.connectorId).then(
    (instance) => instance.loaded.connector.syncDeadline,
    () => undefined,
  );
  if (!deadline || now.getTime() - Date.parse(run.startedAt) <= deadline.value) return undefined;
  return `${new SyncDeadlineError(deadline).message}; the next sync starts on schedule`;
}
