import { randomUUID } from "node:crypto";
import { ConfigError, messageOf } from "../errors";
import { describeVerdict, type GuardVerdict, MAX_REMOVAL_VARIABLE } from "../guard";
import { publishHeld } from "../publish";
import { redact } from "../redact";
import { makeJob } from "../sync";
import { S3GuardStore } from "./aws/guardStore";
import { InstanceRegistry, type InstanceRow } from "./aws/instances";
import type { RunItem } from "./aws/runItem";
import type { CloudConfig } from "./config";
import { openInstance, UnknownInstanceError } from "./instanceRuntime";
import type { Telemetry } from "./observability";
import { RunFlow } from "./runFlow";

/** The scheduler's answer to a release. */
export interface ReleaseAnswer {
  connectorId: string;
  status: "released" | "nothing_held";
  syncId?: string;
  detail?: string;
}

export interface StartAnswer {
  connectorId: string;
  syncId: string;
  status: "started" | "already_running";
}

/**
 * Starts a run of an instance unless one is current: claims it in the registry (the one guard
 * against two runs), records the run with its root jobs pending, sets the label `syncing`, and
 * sends the root jobs. Broken settings put the instance's label at `error`, and no run starts.
 * `row`: the instance's registry row when the caller has just read it, so it is not read again.
 */
export async function startRun(
  config: CloudConfig,
  connectorId: string,
  telemetry: Telemetry,
  row?: InstanceRow,
): Promise<StartAnswer> {
  const registry = new InstanceRegistry(config.instancesTable);
  let instance: Awaited<ReturnType<typeof openInstance>>;
  try {
    instance = await openInstance(config, connectorId, { row });
  } catch (error) {
    // Settings that cannot work: say so on the instance's row, where `cloud list` shows it.
    if (ConfigError.is(error) && !UnknownInstanceError.is(error)) {
      await registry.setError(connectorId, messageOf(error));
    }
    throw error;
  }
  const claim = await registry.claimRun(connectorId, randomUUID());
  if (!claim.claimed) return { connectorId, syncId: claim.syncId, status: "already_running" };
  const { syncId } = claim;
  const { connector } = instance.loaded;
  const run = { syncId, connector: connector.name, connectorId };
  const roots = connector.rootJobs().map((spec) => makeJob(run, spec));
  await new RunFlow(config).start(run, roots);
  telemetry.logger.info("run started", { connectorId, syncId, rootJobs: roots.length });
  await reportLabel(instance.platform, "syncing", undefined, telemetry);
  return { connectorId, syncId, status: "started" };
}

/**
 * Ends a run with `error` and a reason a person can act on: the run record, the registry row and
 * the platform's label. Only the call that ends the run reports, so a reason is said once.
 */
export async function failRun(
  config: CloudConfig,
  run: { syncId: string; connectorId: string; startedAt?: string },
  reason: string,
  telemetry: Telemetry,
): Promise<void> {
  const detail = redact(reason);
  const ended = await new RunFlow(config).fail(run.syncId, detail);
  if (!ended) return;
  telemetry.logger.error("run failed", { ...run, reason: detail });
  telemetry.count("runsFailed", 1);
  await new InstanceRegistry(config.instancesTable).endRun(run.connectorId, run.syncId, {
    status: "error",
    startedAt: run.startedAt ?? new Date().toISOString(),
    detail,
  });
  try {
    const instance = await openInstance(config, run.connectorId);
    await reportLabel(instance.platform, "error", detail, telemetry);
  } catch (error) {
    telemetry.logger.warn("cannot report the error label to the platform", {
      connectorId: run.connectorId,
      error: messageOf(error),
    });
  }
}

/**
 * Ends a finalizing run the mass-deletion guard held (the guarded publish has kept the assembled
 * snapshot and its digest under the instance's `guard/` prefix): the run `held`, the instance
 * released for its next run with the label `error` saying why and how to release it, and nothing
 * uploaded.
 */
export async function holdRun(
  config: CloudConfig,
  run: RunItem,
  verdict: GuardVerdict,
  platform: Parameters<typeof reportLabel>[0],
  telemetry: Telemetry,
): Promise<void> {
  const { connectorId, syncId } = run;
  const detail = redact(
    `The new snapshot was held, not published: ${describeVerdict(verdict)} (${MAX_REMOVAL_VARIABLE} in the instance's settings). If these removals are real, publish it as it is: access-connectors cloud release ${connectorId} --stage ${config.stage} (or invoke the scheduler with {"connectorId":"${connectorId}","release":true}). If not, fix the upstream: a later sync within the limit replaces the held snapshot; the next sync starts on schedule.`,
  );
  await new RunFlow(config).hold(syncId, detail);
  await new InstanceRegistry(config.instancesTable).endRun(connectorId, syncId, {
    status: "error",
    startedAt: run.startedAt,
    detail,
  });
  telemetry.count("runsHeld", 1);
  telemetry.logger.warn("run held: the snapshot removes too much; nothing was uploaded", {
    syncId,
    connectorId,
    users: verdict.users,
    grants: verdict.grants,
    limitPercent: verdict.limit,
  });
  await reportLabel(platform, "error", detail, telemetry);
}

/**
 * Publishes the instance's held snapshot as it was assembled (no sync; lib/publish's release with
 * the guard's objects in S3): uploads it under its run's sync id, makes it the one the next run
 * is compared with, marks the run complete and, unless another run has started or ended since,
 * the instance `connected`. Released once: the held objects are removed, so a second release
 * finds nothing held.
 */
export async function releaseHeld(
  config: CloudConfig,
  connectorId: string,
  telemetry: Telemetry,
): Promise<ReleaseAnswer> {
  const outcome = await publishHeld({
    store: new S3GuardStore(config.shardsBucket, connectorId),
    publish: async (file, syncId) => {
      const { platform } = await openInstance(config, connectorId);
      return { platform, upload: await platform.uploadSnapshot(syncId, file) };
    },
  });
  if (outcome.status !== "released") {
    return {
      connectorId,
      status: "nothing_held",
      detail: `no snapshot of ${connectorId} is held (never, already released, or replaced by a later sync within the limit)`,
    };
  }
  const { held } = outcome;
  const { platform, upload } = outcome.published;
  const run = await new RunFlow(config).release(held.syncId);
  const current = await new InstanceRegistry(config.instancesTable).recordRelease(
    connectorId,
    held.syncId,
    run?.startedAt ?? new Date().toISOString(),
  );
  if (current) await reportLabel(platform, "connected", undefined, telemetry);
  telemetry.count("runsReleased", 1);
  telemetry.logger.info("held snapshot released and uploaded", {
    syncId: held.syncId,
    connectorId,
    users: held.users.length,
    grants: held.grants.length,
    bytes: upload.bytes,
  });
  return { connectorId, syncId: held.syncId, status: "released" };
}

/** Sets the platform label; a platform that cannot be reached is logged, not fatal. */
export async function reportLabel(
  platform: { setStatus(label: "syncing" | "connected" | "error", detail?: string): Promise<void> },
  label: "syncing" | "connected" | "error",
  detail: string | undefined,
  telemetry: Telemetry,
): Promise<void> {
  try {
    await platform.setStatus(label, detail);
  } catch (error) {
    telemetry.logger.warn("cannot set the platform label", {
      label,
      error: messageOf(error),
    });
  }
}
