import { randomUUID } from "node:crypto";
import { dirname } from "node:path";
import type { SnapshotDigest } from "../guard/SnapshotDigest";
import { newRequestContext, Prefetched, type RequestContext } from "../http";
import type { SyncEndRecord } from "../snapshot/records";
import { SnapshotAssembler } from "../snapshot/SnapshotAssembler";
import { SnapshotFile } from "../snapshot/SnapshotFile";
import { SyncDeadlineError } from "./errors";
import { type Job, makeJob, type RecordSink } from "./job";
import { runJob } from "./runJob";
import type { Syncer } from "./types";

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
  connector: Syncer;
  /** The snapshot path; `.gz` compresses. */
  outFile: string;
  /**
   * How to write the snapshot on another filesystem, for the message of a write error (a full
   * disk): by default it names `sync`'s --out and the service's CONNECTOR_STATE_DIR.
   */
  elsewhere?: string;
  /** Jobs run at once (the HTTP limiter bounds requests separately). */
  concurrency: number;
  syncId?: string;
  /** The instance synced; the connector kind when not given. */
  connectorId?: string;
  /** This run's counters, logger and abort signal; a fresh silent one when not given. */
  ctx?: RequestContext;
  onProgress?: (progress: SyncProgress) => void;
}

/** A sync's summary, and the removal guard's digest of the snapshot it wrote (`SnapshotAssembler.digest`). */
export interface LocalSyncResult {
  summary: SyncSummary;
  digest: SnapshotDigest;
}

/** Where else a snapshot can go, as the command line and the service choose it. */
const ELSEWHERE =
  "write the snapshot on another filesystem (--out of `access-connectors sync`, CONNECTOR_STATE_DIR of the service)";

/**
 * The embedded runtime: an in-process queue of jobs, run with bounded concurrency, records
 * streamed through the assembler to a snapshot file. The first failing job stops the sync and no
 * snapshot replaces the previous one. When the connector's `syncDeadline` passes, the requests in
 * flight are aborted and the sync fails with `SyncDeadlineError`.
 */
export async function runLocalSync(options: LocalSyncOptions): Promise<LocalSyncResult> {
  const { connector } = options;
  const outer = options.ctx ?? newRequestContext();
  const stop = new AbortController();
  const ctx: RequestContext = {
    ...outer,
    signal: outer.signal ? AbortSignal.any([outer.signal, stop.signal]) : stop.signal,
    // Every job runs here: a list's next pages can be asked for while its current one is read.
    prefetched: new Prefetched(),
  };
  const listCtx: RequestContext = { ...ctx, priority: 1 };
  const startedAt = new Date();
  const syncId = options.syncId ?? randomUUID();
  const run = {
    syncId,
    connector: connector.name,
    connectorId: options.connectorId ?? connector.name,
  };
  const elsewhere = options.elsewhere ?? ELSEWHERE;
  const file = await SnapshotFile.open(options.outFile, syncId, elsewhere);
  let assembler: SnapshotAssembler | undefined;

  const queue: Job[] = connector.rootJobs().map((spec) => makeJob(run, spec));
  let active = 0;
  let jobsDone = 0;
  let records = 0;
  let failure: { error: unknown } | undefined;
  /** Ends the wait for the jobs: when they are all done, or at once when the deadline passes. */
  let settle = () => {};
  let expired: SyncDeadlineError | undefined;
  const deadline = connector.syncDeadline;
  const timer =
    deadline &&
    setTimeout(() => {
      if (!failure) {
        expired = new SyncDeadlineError(deadline);
        failure = { error: expired };
      }
      stop.abort();
      settle();
    }, deadline.value);

  const report = () =>
    options.onProgress?.({
      jobsDone,
      jobsPending: queue.length + active,
      records,
      requests: ctx.counters.requests,
    });

  try {
    const snapshot = await SnapshotAssembler.open({
      out: file.stream,
      outFile: file.file,
      outReleasesChunks: true,
      spoolDir: dirname(options.outFile),
      spoolElsewhere: elsewhere,
      syncId,
      connector: connector.name,
      startedAt,
    });
    assembler = snapshot;
    await snapshot.write(connector.resourceTypes());
    await new Promise<void>((resolve) => {
      settle = resolve;
      const start = (job: Job, before?: Promise<void>) => {
        active++;
        runOne(job, before).finally(() => {
          active--;
          jobsDone++;
          report();
          pump();
        });
      };
      const pump = () => {
        while (!failure && active < options.concurrency && queue.length > 0) {
          start(queue.shift() as Job);
        }
        if (active === 0 && (failure || queue.length === 0)) resolve();
      };
      /** Runs a job; `before`, for a list's page, is the write of the page before it. */
      const runOne = async (job: Job, before?: Promise<void>) => {
        try {
          // A top-level list's pages are the longest chain of requests: they start first.
          // Records go to the assembler as the job hands them over (a failed job fails the sync,
          // so none are kept on their own) and are not held past this block: it keeps bytes.
          let count = 0;
          const sink: RecordSink = {
            write: (records) => {
              count += records.length;
              // A failed write fails every later one: the page's last write below reports it.
              snapshot.write(records).catch(() => {});
            },
          };
          const { next, followUps, written } = await runJob(
            connector,
            job,
            job.parent ? ctx : listCtx,
            sink,
          ).then((result) => {
            count += result.records.length;
            return { ...result, written: snapshot.write(result.records) };
          });
          // Handled below, after the next page may have waited: a failure is never unhandled.
          written.catch(() => {});
          for (const child of followUps) {
            if (child === next) continue;
            if (child.resourceType === job.resourceType && child.op === job.op)
              queue.unshift(child);
            else queue.push(child);
          }
          if (next) {
            // A list's next page is the critical path (its pages are judged one after another):
            // it starts at once, in the slot of this page, whose request is done, rather than
            // wait for a free slot and for this page's records to be written (the limiter keeps
            // requests in flight within the concurrency). It waits for the page before this one
            // to be written, so that a list whose pages come faster than they are written has
            // at most two pages in hand, besides the pages asked for ahead (`Prefetched`).
            await before?.catch(() => {});
            if (!failure) start(next, written);
          }
          await written;
          records += count;
        } catch (error) {
          failure ??= { error };
        }
      };
      pump();
    });
    if (failure) throw failure.error;
    const result = await snapshot.complete();
    if (expired) throw expired;
    await file.commit();
    const { counters } = ctx;
    const summary: SyncSummary = {
      syncId,
      connector: connector.name,
      status: "complete",
      snapshot: file.path,
      counts: result.counts,
      skipped: result.skipped,
      jobs: jobsDone,
      requests: counters.requests,
      retries: counters.retries,
      rateLimitWaits: counters.rateLimitWaits,
      rateLimitWaitMs: counters.rateLimitWaitMs,
      durationMs: Date.now() - startedAt.getTime(),
    };
    return { summary, digest: snapshot.digest };
  } catch (error) {
    await assembler?.abort();
    await file.abort();
    throw expired ?? error;
  } finally {
    clearTimeout(timer);
    // What is still on its way (a page asked for ahead of a list that failed or ended short)
    // belongs to this sync: it must not hold the limiter, shared with the next sync, or count.
    stop.abort();
  }
}
