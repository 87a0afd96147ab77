import type { SQSRecord } from "aws-lambda";
import { ConnectorError } from "../errors";
import { isRetryableError, newRequestContext, RateLimitedError } from "../http";
import { withFields } from "../logging";
import { redact } from "../redact";
import { describeJob, InvalidJobError, type Job, parseJob, runJob } from "../sync";
import type { CloudConfig } from "./config";
import { openInstance } from "./instanceRuntime";
import { failRun } from "./lifecycle";
import { sendFinalize, sendJobs } from "./messages";
import type { Telemetry } from "./observability";
import { type JobMarker, RunStore } from "./runs";
import { jobId, ShardStore, shardKeys } from "./shards";
import { sharedRate } from "./sharedRate";

/** Stop upstream work this long before the function's deadline, to commit or hand the job back. */
const DEADLINE_MARGIN_MS = 15_000;
/** SQS's longest message delay. */
const MAX_DELAY_SECONDS = 900;

export interface WorkerInvocation {
  config: CloudConfig;
  telemetry: Telemetry;
  /** Milliseconds the function has left (Lambda's `getRemainingTimeInMillis`). */
  remainingMs: () => number;
}

/**
 * Runs one job message of the sync-jobs queue (CONTRACTS.md section 6). Returns normally when the
 * message is done with (committed, a duplicate, a run that is over, a job that can never succeed
 * and has failed its run, a rate-limited job sent back with a delay); throws to have it delivered
 * again, until the queue's redrive moves it to the dead-letter queue, by which time its run has
 * ended `error`.
 */
export async function processJobMessage(record: SQSRecord, inv: WorkerInvocation): Promise<void> {
  const { config, telemetry } = inv;
  const job = parseMessage(record, telemetry);
  if (!job) return;
  const id = jobId(job);
  const logger = withFields(telemetry.logger, {
    syncId: job.syncId,
    connectorId: job.connectorId,
    jobId: id,
    job: describeJob(job),
  });
  const runs = new RunStore(config.runsTable);
  const run = await runs.get(job.syncId);
  if (run?.status !== "running") {
    logger.info("job of a run that is over, dropped", { runStatus: run?.status });
    return;
  }
  const marker = await runs.marker(job.syncId, id);
  if (!marker) {
    logger.warn("job nobody asked for, dropped");
    return;
  }
  const shards = new ShardStore(config.shardsBucket);
  if (marker.state === "done") {
    logger.info("job already done");
    await sendChildrenOnce(inv, runs, shards, job.syncId, marker);
    await finalizeIfDone(inv, runs, job.syncId);
    return;
  }

  try {
    const instance = await openInstance(config, job.connectorId);
    const ctx = newRequestContext({
      logger,
      onRateLimit: "throw",
      signal: AbortSignal.timeout(Math.max(1_000, inv.remainingMs() - DEADLINE_MARGIN_MS)),
      ...optionalSharedRate(config, job.connectorId, instance.loaded.requestsPerSecond),
    });
    const result = await runJob(instance.loaded.connector, job, ctx).finally(() => {
      telemetry.count("requests", ctx.counters.requests);
      telemetry.count("retries", ctx.counters.retries);
    });

    const keys = shardKeys(job.syncId, id, record.messageId);
    await Promise.all([
      shards.putShard(keys.shardKey, result.records),
      shards.putChildren(keys.childrenKey, result.followUps),
    ]);
    const owned = new Set(await runs.claimChildren(job.syncId, id, result.followUps.map(jobId)));
    const outcome = await runs.commit(job.syncId, id, {
      ...keys,
      records: result.records.length,
      requests: ctx.counters.requests,
      children: owned.size,
    });
    logger.info("job done", {
      outcome,
      records: result.records.length,
      children: owned.size,
    });
    if (outcome === "run_over") return;
    if (outcome === "committed") {
      telemetry.count("records", result.records.length);
      const children = result.followUps.filter((j) => owned.has(jobId(j)));
      await sendJobs(config.syncJobsQueueUrl, children);
      await runs.markChildrenSent(job.syncId, id);
    } else {
      // Another delivery committed first; should it die before sending, this one sends.
      const committed = await runs.marker(job.syncId, id);
      if (committed) await sendChildrenOnce(inv, runs, shards, job.syncId, committed);
    }
    await finalizeIfDone(inv, runs, job.syncId);
  } catch (error) {
    await handleFailure(error, record, job, inv);
  }
}

function parseMessage(record: SQSRecord, telemetry: Telemetry): Job | undefined {
  try {
    return parseJob(JSON.parse(record.body));
  } catch (error) {
    // Nothing to retry and no run to name: a message this runtime never sends.
    telemetry.logger.error("not a sync job, dropped", {
      messageId: record.messageId,
      error: error instanceof Error ? error.message : String(error),
    });
    telemetry.count("invalidMessages", 1);
    return undefined;
  }
}

function optionalSharedRate(
  config: CloudConfig,
  connectorId: string,
  requestsPerSecond: number | undefined,
) {
  const shared = sharedRate(config.runsTable, connectorId, requestsPerSecond);
  return shared ? { sharedRate: shared } : {};
}

/**
 * A failed job: a rate limit goes back to the queue as a delayed copy (no function waits, and no
 * delivery is spent); an error that will not change ends the run now; anything else is retried
 * by the queue, and on the last delivery the run ends before the message rests in the
 * dead-letter queue.
 */
async function handleFailure(
  error: unknown,
  record: SQSRecord,
  job: Job,
  inv: WorkerInvocation,
): Promise<void> {
  const { config, telemetry } = inv;
  const message = redact(error instanceof Error ? error.message : String(error));
  const run = { syncId: job.syncId, connectorId: job.connectorId };
  if (RateLimitedError.is(error)) {
    const delaySeconds = Math.min(MAX_DELAY_SECONDS, Math.max(1, Math.ceil(error.waitMs / 1000)));
    telemetry.count("throttles", 1);
    telemetry.logger.info("rate limited; job sent back with a delay", { ...run, delaySeconds });
    await sendJobs(config.syncJobsQueueUrl, [job], delaySeconds);
    return;
  }
  if (isPermanent(error)) {
    await failRun(config, run, `${describeJob(job)} cannot succeed: ${message}`, telemetry);
    return;
  }
  const receives = Number(record.attributes.ApproximateReceiveCount ?? "1");
  if (receives >= config.jobMaxReceives) {
    await failRun(
      config,
      run,
      `${describeJob(job)} failed ${receives} times (last: ${message}); it rests in the sync-jobs dead-letter queue and nothing was uploaded. Check the upstream, then start a new sync`,
      telemetry,
    );
  } else {
    telemetry.logger.warn("job failed; the queue will deliver it again", {
      ...run,
      receives,
      error: message,
    });
  }
  throw error;
}

/** An error that the same job would meet again: a bad job, bad settings, rejected credentials. */
function isPermanent(error: unknown): boolean {
  if (InvalidJobError.is(error)) return true;
  return ConnectorError.is(error) && !isRetryableError(error) && error.code !== "aborted";
}

/**
 * Sends the still pending children a done job owns, unless its children were sent already: the
 * delivery that committed it died before sending them, or is about to (a copy then is harmless).
 */
async function sendChildrenOnce(
  inv: WorkerInvocation,
  runs: RunStore,
  shards: ShardStore,
  syncId: string,
  marker: JobMarker,
): Promise<void> {
  if (marker.childrenSent || !marker.childrenKey) return;
  const children = await shards.getChildren(marker.childrenKey);
  const pending: Job[] = [];
  for (const child of children) {
    const childMarker = await runs.marker(syncId, jobId(child));
    if (childMarker?.state === "pending" && childMarker.owner === marker.jobId) pending.push(child);
  }
  await sendJobs(inv.config.syncJobsQueueUrl, pending);
  await runs.markChildrenSent(syncId, marker.jobId);
}

/** Sends the finalize message once nothing is outstanding (finalize also takes a run only once). */
async function finalizeIfDone(inv: WorkerInvocation, runs: RunStore, syncId: string) {
  const run = await runs.get(syncId);
  if (run?.status === "running" && run.outstanding === 0 && !run.finalizeRequested) {
    await sendFinalize(inv.config.finalizeQueueUrl, { syncId });
    await runs.markFinalizeRequested(syncId);
  }
}
