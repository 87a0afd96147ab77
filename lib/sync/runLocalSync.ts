import { randomUUID } from "node:crypto";
import type { SyncConnector } from "../connectors/types";
import { followUpJobs, type Job, makeJob } from "./job";
import type { SyncEndRecord } from "./records";
import { SnapshotWriter } from "./SnapshotWriter";

export interface SyncProgress {
  jobsDone: number;
  jobsPending: number;
  records: number;
  requests: number;
}

export interface SyncSummary {
  syncId: string;
  connector: string;
  status: "complete";
  snapshot: string;
  counts: SyncEndRecord["counts"];
  skipped: SyncEndRecord["skipped"];
  jobs: number;
  requests: number;
  retries: number;
  rateLimitWaits: number;
  rateLimitWaitMs: number;
  durationMs: number;
}

export interface LocalSyncOptions {
  connector: SyncConnector;
  /** The snapshot path; `.gz` compresses. */
  outFile: string;
  /** Jobs run at once (the HTTP limiter bounds requests separately). */
  concurrency: number;
  syncId?: string;
  onProgress?: (progress: SyncProgress) => void;
}

/**
 * The embedded runtime: an in-process queue of jobs, run with bounded concurrency, records
 * streamed to a snapshot file. The first failing job stops the sync and no snapshot replaces
 * the previous one.
 */
export async function runLocalSync(options: LocalSyncOptions): Promise<SyncSummary> {
  const { connector } = options;
  const startedAt = new Date();
  const syncId = options.syncId ?? randomUUID();
  const writer = await SnapshotWriter.open({
    path: options.outFile,
    syncId,
    connector: connector.name,
    startedAt,
  });

  const queue: Job[] = connector.rootJobs().map((spec) => makeJob(syncId, connector.name, spec));
  let active = 0;
  let jobsDone = 0;
  let records = 0;
  let failure: { error: unknown } | undefined;

  const report = () =>
    options.onProgress?.({
      jobsDone,
      jobsPending: queue.length + active,
      records,
      requests: connector.counters.requests,
    });

  try {
    await writer.write(connector.resourceTypes());
    await new Promise<void>((resolve) => {
      const pump = () => {
        while (!failure && active < options.concurrency && queue.length > 0) {
          const job = queue.shift() as Job;
          active++;
          runOne(job).finally(() => {
            active--;
            jobsDone++;
            report();
            pump();
          });
        }
        if (active === 0 && (failure || queue.length === 0)) resolve();
      };
      const runOne = async (job: Job) => {
        try {
          const page = await connector.runJob(job);
          await writer.write(page.records);
          records += page.records.length;
          queue.push(...followUpJobs(job, page));
        } catch (error) {
          failure ??= { error };
        }
      };
      pump();
    });
    if (failure) throw failure.error;
    const result = await writer.complete();
    const counters = connector.counters;
    return {
      syncId,
      connector: connector.name,
      status: "complete",
      snapshot: result.path,
      counts: result.counts,
      skipped: result.skipped,
      jobs: jobsDone,
      requests: counters.requests,
      retries: counters.retries,
      rateLimitWaits: counters.rateLimitWaits,
      rateLimitWaitMs: counters.rateLimitWaitMs,
      durationMs: Date.now() - startedAt.getTime(),
    };
  } catch (error) {
    await writer.abort();
    throw error;
  }
}
