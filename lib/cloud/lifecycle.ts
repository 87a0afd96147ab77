import { randomUUID } from "node:crypto";
import { ConfigError } from "../errors";
import { redact } from "../redact";
import { makeJob } from "../sync";
import type { CloudConfig } from "./config";
import { openInstance, UnknownInstanceError } from "./instanceRuntime";
import { InstanceRegistry } from "./instances";
import { sendJobs } from "./messages";
import type { Telemetry } from "./observability";
import { RunStore } from "./runs";
import { jobId } from "./shards";

export interface StartAnswer {
  connectorId: string;
  syncId: string;
  status: "started" | "already_running";
}

/**
 * Starts a run of an instance unless one is current: claims it in the registry (the one guard
 * against two runs), records the run with its root jobs pending, sets the label `syncing`, and
 * sends the root jobs. Broken settings put the instance's label at `error`, and no run starts.
 */
export async function startRun(
  config: CloudConfig,
  connectorId: string,
  telemetry: Telemetry,
): Promise<StartAnswer> {
  const registry = new InstanceRegistry(config.instancesTable);
  let instance: Awaited<ReturnType<typeof openInstance>>;
  try {
    instance = await openInstance(config, connectorId);
  } catch (error) {
    // Settings that cannot work: say so on the instance's row, where `cloud list` shows it.
    if (ConfigError.is(error) && !UnknownInstanceError.is(error)) {
      await registry.setError(connectorId, redact((error as Error).message));
    }
    throw error;
  }
  const claim = await registry.claimRun(connectorId, randomUUID());
  if (!claim.claimed) return { connectorId, syncId: claim.syncId, status: "already_running" };
  const { syncId } = claim;
  const { connector } = instance.loaded;
  const roots = connector
    .rootJobs()
    .map((spec) => makeJob({ syncId, connector: connector.name, connectorId }, spec));
  const runs = new RunStore(config.runsTable);
  await runs.open({ syncId, connectorId, connector: connector.name, rootJobIds: roots.map(jobId) });
  await sendJobs(config.syncJobsQueueUrl, roots);
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
  const ended = await new RunStore(config.runsTable).fail(run.syncId, detail);
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
      error: redact(error instanceof Error ? error.message : String(error)),
    });
  }
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
      error: redact(error instanceof Error ? error.message : String(error)),
    });
  }
}
