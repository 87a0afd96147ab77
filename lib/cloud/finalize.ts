import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { messageOf } from "../errors";
import { MAX_REMOVAL_VARIABLE, parseRemovalLimit } from "../guard";
import { publishGuarded } from "../publish";
import { S3GuardStore } from "./aws/guardStore";
import { InstanceRegistry } from "./aws/instances";
import { type FinalizeMessage, finalizeMessage } from "./aws/messages";
import { ShardStore } from "./aws/shards";
import type { CloudConfig } from "./config";
import { openInstance } from "./instanceRuntime";
import { failRun, holdRun, reportLabel } from "./lifecycle";
import type { Telemetry } from "./observability";
import { RunFlow } from "./runFlow";
import { writeRunSnapshot } from "./runSnapshot";

export interface FinalizeOutcome {
  syncId: string;
  status: "complete" | "error" | "skipped" | "held";
  counts?: Record<string, number>;
}

/** One message of the finalize queue; one that is not a finalize message is logged and dropped. */
export async function finalizeRecord(
  body: string,
  config: CloudConfig,
  telemetry: Telemetry,
): Promise<FinalizeOutcome | undefined> {
  let message: FinalizeMessage;
  try {
    message = finalizeMessage.parse(JSON.parse(body));
  } catch (error) {
    telemetry.logger.error("not a finalize message, dropped", {
      error: messageOf(error),
    });
    return undefined;
  }
  return finalizeRun(message, config, telemetry);
}

/**
 * Publishes a run whose jobs are all done: takes the run (once), streams the committed shards
 * through the same assembler as the CLI into a gzip file, checks that every job is done, then the
 * guarded publish of lib/publish (the guard's objects in S3, the platform upload): a snapshot that
 * removes too much is held (see `holdRun`); one within the limit is uploaded and the label set
 * `connected`. Any failure ends the run `error` with the reason, and nothing is uploaded.
 */
export async function finalizeRun(
  message: FinalizeMessage,
  config: CloudConfig,
  telemetry: Telemetry,
): Promise<FinalizeOutcome> {
  const { syncId } = message;
  const flow = new RunFlow(config);
  const run = await flow.takeForFinalize(syncId);
  if (!run) {
    telemetry.logger.info("run not ready or taken by another finalizer", { syncId });
    return { syncId, status: "skipped" };
  }
  let dir: string | undefined;
  try {
    // Inside the try: a /tmp too full for a directory ends the run `error` too.
    dir = await mkdtemp(join(tmpdir(), "finalize-"));
    const shardKeys = await flow.committedShards(syncId);
    const instance = await openInstance(config, run.connectorId);
    const path = join(dir, `${syncId}.jsonl.gz`);
    const shards = new ShardStore(config.shardsBucket);
    const snapshot = await writeRunSnapshot(path, run, {
      resourceTypes: instance.loaded.connector.resourceTypes(),
      shardKeys,
      openShard: (key) => shards.openShard(key),
    });
    const outcome = await publishGuarded({
      snapshotFile: path,
      digest: snapshot.digest,
      syncId,
      limit: parseRemovalLimit(instance.settings[MAX_REMOVAL_VARIABLE], MAX_REMOVAL_VARIABLE),
      store: new S3GuardStore(config.shardsBucket, run.connectorId),
      publish: (file, id) => instance.platform.uploadSnapshot(id, file),
    });
    if (outcome.held) {
      await holdRun(config, run, outcome.verdict, instance.platform, telemetry);
      return { syncId, status: "held", counts: snapshot.counts };
    }
    const { verdict, published: upload } = outcome;
    await flow.complete(syncId);
    await new InstanceRegistry(config.instancesTable).endRun(run.connectorId, syncId, {
      status: "complete",
      startedAt: run.startedAt,
    });
    await reportLabel(instance.platform, "connected", undefined, telemetry);
    const durationMs = Date.now() - Date.parse(run.startedAt);
    telemetry.duration("runDuration", durationMs);
    telemetry.count("runsCompleted", 1);
    telemetry.logger.info("run complete", {
      syncId,
      connectorId: run.connectorId,
      counts: snapshot.counts,
      skipped: snapshot.skipped,
      bytes: upload.bytes,
      guard: { basis: verdict.basis, users: verdict.users, grants: verdict.grants },
      jobs: shardKeys.length,
      shardWorkers: snapshot.shardWorkers,
      durationMs,
    });
    return { syncId, status: "complete", counts: snapshot.counts };
  } catch (error) {
    const reason = messageOf(error);
    await failRun(config, run, `the snapshot was not published: ${reason}`, telemetry);
    return { syncId, status: "error" };
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}
