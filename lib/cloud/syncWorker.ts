import type { SQSRecord } from "aws-lambda";
import * as z from "zod";
import { ConnectorError, messageOf } from "../errors";
import { type HttpCounters, isRetryableError, newRequestContext, RateLimitedError } from "../http";
import { withFields } from "../logging";
import {
  describeJob,
  InvalidJobError,
  type Job,
  type PagesBound,
  parseJob,
  runJobPages,
} from "../sync";
import { jobId } from "../sync/job";
import type { JobSlots } from "./aws/jobSlots";
import { RATE_REFUSALS_ATTRIBUTE, sendJobs } from "./aws/messages";
import { sharedRate } from "./aws/sharedRate";
import { sharedTokens } from "./aws/sharedTokens";
import type { CloudConfig } from "./config";
import { openInstance } from "./instanceRuntime";
import { failRun } from "./lifecycle";
import type { Telemetry } from "./observability";
import { RunFlow } from "./runFlow";

/** Stop upstream work this long before the function's deadline, to commit or hand the job back. */
const DEADLINE_MARGIN_MS = 15_000;
/** SQS's longest message delay. */
const MAX_DELAY_SECONDS = 900;
/** A job handed back for a rate limit the n-th time waits up to 2^n s, at most this (jittered). */
const MAX_BACKOFF_SECONDS = 256;
const rateRefusals = z.coerce.number().int().min(0);
/**
 * A delivery's 429s are waited in the function for this long in all (ms; a request's first only:
 * a window's end, a bucket's next token), each request then tried at its next shared slot: a
 * hand-back costs a queue's round trip, and takes the job's demand off the rate being learned.
 */
const WAIT_IN_PLACE_MS = 2_000;
/** A job slot's lease lasts the invocation's time left and this much more. */
const SLOT_LEASE_MARGIN_MS = 10_000;

/**
 * How far a job follows its list's next pages in one delivery (docs/cloud.md, "Jobs"): a shard of
 * at most about 10,000 records, 10 pages, and children few enough for one commit's transaction
 * (a page asks for at most 41: BlackLine's membership groups and its next page), with time left
 * for another page as slow as the slowest so far before the deadline margin.
 */
const PAGES_BOUND = { records: 10_000, pages: 10, children: 40 } as const;

function pagesBound(inv: WorkerInvocation): PagesBound {
  return {
    ...PAGES_BOUND,
    timeForAnother: (slowestPageMs) => inv.remainingMs() > DEADLINE_MARGIN_MS + 2 * slowestPageMs,
  };
}

export interface WorkerInvocation {
  config: CloudConfig;
  telemetry: Telemetry;
  /** Milliseconds the function has left (Lambda's `getRemainingTimeInMillis`). */
  remainingMs: () => number;
}

/**
 * Runs one job message of the sync-jobs queue (docs/cloud.md). Returns normally when the
 * message is done with (committed, a duplicate, a run that is over, a job that can never succeed
 * and has failed its run, a rate-limited job sent back with a delay); throws to have it delivered
 * again, until the queue's redrive moves it to the dead-letter queue, by which time its run has
 * ended `error`.
 */
export async function processJobMessage(record: SQSRecord, inv: WorkerInvocation): Promise<void> {
  const { config, telemetry } = inv;
  const job = parseMessage(record, telemetry);
  if (!job) return;
  const logger = withFields(telemetry.logger, {
    syncId: job.syncId,
    connectorId: job.connectorId,
    jobId: jobId(job),
    job: describeJob(job),
  });
  // Opened while the job is accepted and its slot taken: these reads are most of the time before
  // a job's first request, and each fan-out's jobs wait them out. A job dropped or held leaves it
  // unused: one registry read (the secret is cached in a warm function).
  const opening = openInstance(config, job.connectorId);
  opening.catch(() => {}); // heard below, where the job runs
  const flow = new RunFlow(config);
  const accepted = await flow.accept(job);
  switch (accepted.status) {
    case "run_over":
      logger.info("job of a run that is over, dropped", { runStatus: accepted.runStatus });
      return;
    case "unknown":
      logger.warn("job nobody asked for, dropped");
      return;
    case "already_done":
      logger.info("job already done");
      // A slot reserved for this copy is free; the delivery that did the job may have died before
      // it released held jobs into its own.
      await flow.releaseHeld(job.syncId, jobId(job));
      return;
  }
  const slots = flow.slots(job.syncId);
  // Held by the job's id: a slot a release reserved for the job is its own.
  const holder = jobId(job);
  // The lease outlives the invocation, so a worker that dies frees its slot soon after.
  const slot = await slots.take(holder, Date.now() + inv.remainingMs() + SLOT_LEASE_MARGIN_MS);
  if (slot === undefined) {
    await holdJob(job, slots, flow, inv);
    return;
  }
  let slotHeld = true;
  const freeSlot = async () => {
    if (!slotHeld) return;
    slotHeld = false;
    // A slot not given back is free again when its lease ends.
    await slots.giveBack(slot, holder).catch((error: unknown) => {
      logger.warn("job slot not given back", { error: messageOf(error) });
    });
  };

  let counters: HttpCounters | undefined;
  let committed = false;
  try {
    const [instance] = await Promise.all([opening, flow.heartbeat(job.syncId)]);
    const ctx = newRequestContext({
      logger,
      onRateLimit: "throw",
      waitInPlace: { leftMs: WAIT_IN_PLACE_MS },
      signal: AbortSignal.timeout(Math.max(1_000, inv.remainingMs() - DEADLINE_MARGIN_MS)),
      ...optionalSharedRate(inv, job.connectorId, instance.loaded.requestsPerSecond),
      sharedTokens: sharedTokens(config.runsTable, job.connectorId, instance.settings),
    });
    counters = ctx.counters;
    const bound = pagesBound(inv);
    const result = await runJobPages(instance.loaded.connector, job, ctx, bound).finally(() => {
      telemetry.count("requests", ctx.counters.requests);
      telemetry.count("retries", ctx.counters.retries);
    });
    const { outcome, children } = await flow.commit(
      job,
      record.messageId,
      result,
      ctx.counters.requests,
      freeSlot,
    );
    logger.info("job done", {
      outcome,
      pages: result.pages,
      records: result.records.length,
      children,
    });
    committed = outcome === "committed";
    if (committed) {
      telemetry.count("jobs", 1);
      telemetry.count("records", result.records.length);
    }
  } catch (error) {
    await handleFailure(error, record, job, inv);
  } finally {
    await freeSlot();
    await countUpstream(job, counters, committed, inv);
    // Into the slot just given back, or one a commit's children left free. A failure throws, so
    // the message comes back and its next delivery releases them (`already_done` above).
    await flow.releaseHeld(job.syncId);
  }
}

/**
 * A job whose instance has all its slots in flight waits in the runs table until a slot frees
 * (docs/cloud.md, "Jobs"), so it holds no worker and leaves the queue to the other instances'
 * jobs; it spends no delivery. Then it is released at once if a slot freed meanwhile (its giver
 * may have looked before it was held).
 */
async function holdJob(job: Job, slots: JobSlots, flow: RunFlow, { telemetry }: WorkerInvocation) {
  telemetry.count("jobsHeld", 1);
  telemetry.logger.info("instance at its cap of jobs in flight; job held until a slot frees", {
    syncId: job.syncId,
    connectorId: job.connectorId,
  });
  await slots.hold([job]);
  await flow.releaseHeld(job.syncId);
}

/** Sends the job back to the queue delayed, and moves its run's stall clock to its return. */
async function sendBack(config: CloudConfig, job: Job, delaySeconds: number, rateRefusals: number) {
  await sendJobs(config.syncJobsQueueUrl, [job], { delaySeconds, rateRefusals });
  await new RunFlow(config).heartbeat(job.syncId, Date.now() + delaySeconds * 1000);
}

/**
 * Adds to the job's run what its requests met upstream, however the delivery ended: the requests
 * of a delivery that did not commit the job (handed back rate-limited, failed, or a duplicate; a
 * commit counts its own, in its transaction) and the 429 answers of every delivery, so a run
 * counts each request its upstream answered once, and each 429 (`cloud runs`, and the
 * upstream429s metric). A count, not the run's state: never throws.
 */
async function countUpstream(
  job: Job,
  counters: HttpCounters | undefined,
  committed: boolean,
  { config, telemetry }: WorkerInvocation,
): Promise<void> {
  const refused = counters?.statuses["429"] ?? 0;
  const requests = committed ? 0 : (counters?.requests ?? 0);
  if (refused > 0) telemetry.count("upstream429s", refused);
  if (refused === 0 && requests === 0) return;
  const count = { requests, refused };
  await new RunFlow(config).countUpstream(job.syncId, count).catch((countError: unknown) => {
    telemetry.logger.warn("the upstream requests were not counted on the run", {
      syncId: job.syncId,
      connectorId: job.connectorId,
      ...count,
      error: messageOf(countError),
    });
  });
}

function parseMessage(record: SQSRecord, telemetry: Telemetry): Job | undefined {
  try {
    return parseJob(JSON.parse(record.body));
  } catch (error) {
    // Nothing to retry and no run to name: a message this runtime never sends.
    telemetry.logger.error("not a sync job, dropped", {
      messageId: record.messageId,
      error: messageOf(error),
    });
    telemetry.count("invalidMessages", 1);
    return undefined;
  }
}

function optionalSharedRate(
  { config, telemetry }: WorkerInvocation,
  connectorId: string,
  requestsPerSecond: number | undefined,
) {
  // The instance's rate outlives the job: its lines name the instance, not the job.
  const logger = withFields(telemetry.logger, { connectorId });
  const shared = sharedRate(config.runsTable, connectorId, requestsPerSecond, logger);
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
  const message = messageOf(error);
  const run = { syncId: job.syncId, connectorId: job.connectorId };
  if (RateLimitedError.is(error)) {
    const refusals = rateRefusalsOf(record);
    const delaySeconds = handBackDelay(error.waitMs, refusals);
    telemetry.count("throttles", 1);
    telemetry.logger.info("rate limited; job sent back with a delay", { ...run, delaySeconds });
    await sendBack(config, job, delaySeconds, refusals + 1);
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

/**
 * How long a job handed back for a rate limit waits: the upstream's wait (Retry-After), and a
 * backoff that doubles with each hand-back of the job (random within [2^(n-1), 2^n] s, at most
 * MAX_BACKOFF_SECONDS), so the jobs of an instance whose rate is full spread out instead of
 * coming back together; a delay fits in SQS's 900 s.
 */
function handBackDelay(waitMs: number, refusals: number): number {
  const ceiling = Math.min(MAX_BACKOFF_SECONDS, 2 ** refusals);
  const backoff = ceiling / 2 + (Math.random() * ceiling) / 2;
  return Math.min(MAX_DELAY_SECONDS, Math.max(1, Math.ceil(waitMs / 1000), Math.ceil(backoff)));
}

/** The hand-backs so far of a job (its message attribute; none on a job's first message). */
function rateRefusalsOf(record: SQSRecord): number {
  const parsed = rateRefusals.safeParse(
    record.messageAttributes[RATE_REFUSALS_ATTRIBUTE]?.stringValue ?? 0,
  );
  return parsed.success ? parsed.data : 0;
}

/** An error that the same job would meet again: a bad job, bad settings, rejected credentials. */
function isPermanent(error: unknown): boolean {
  if (InvalidJobError.is(error)) return true;
  return ConnectorError.is(error) && !isRetryableError(error) && error.code !== "aborted";
}
