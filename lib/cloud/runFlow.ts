import { type Job, type JobResult, parseJob, type RunIdentity } from "../sync";
import { jobId } from "../sync/job";
import { JobSlots } from "./aws/jobSlots";
import { sendFinalize, sendJobs } from "./aws/messages";
import type { JobMarker, RunItem } from "./aws/runItem";
import { type ChildClaim, type CommitOutcome, FINALIZE_LEASE_SECONDS, RunStore } from "./aws/runs";
import { ShardStore, shardKeyOf } from "./aws/shards";
import type { CloudConfig } from "./config";

/**
 * A container writes a run's heartbeat at most this often, so a run's item takes a few heartbeat
 * writes a minute however many jobs its workers start.
 */
const HEARTBEAT_EVERY_MS = 60_000;
/** When this container last wrote each run's heartbeat, and for what time (kept while warm). */
const heartbeats = new Map<string, number>();
const HEARTBEATS_KEPT = 1_000;

/** What a job message may do: run, or nothing (its run is over, nobody asked for it, it is done). */
export type Acceptance =
  | { status: "run" }
  | { status: "run_over"; runStatus: RunItem["status"] | undefined }
  | { status: "unknown" }
  | { status: "already_done" };

/**
 * The cloud run's transitions, in one place: start a run, accept a job message, commit a job's
 * pages and send the children it owns, send the run to finalize once nothing is outstanding, take
 * it for finalizing, and end it (complete, held, released, or error). Nothing else in lib/cloud
 * touches a run's state.
 * Its state is in DynamoDB (`RunStore`: the run's count and one marker a job), its records in S3
 * (`ShardStore`, one object a job), its messages on SQS; each transition is safe to repeat, so a message delivered
 * twice, or a worker that dies between two steps, leaves the run counting each job once.
 */
export class RunFlow {
  readonly #config: CloudConfig;
  readonly #runs: RunStore;
  readonly #shards: ShardStore;

  constructor(config: CloudConfig) {
    this.#config = config;
    this.#runs = new RunStore(config.runsTable);
    this.#shards = new ShardStore(config.shardsBucket);
  }

  /** Records a new run with its root jobs pending, then sends them. */
  async start(run: RunIdentity, roots: readonly Job[]): Promise<void> {
    await this.#runs.open({ ...run, rootJobIds: roots.map(jobId) });
    await sendJobs(this.#config.syncJobsQueueUrl, roots);
  }

  /**
   * Whether a job message runs: only a job pending in a running run does. A redelivery of a job
   * already done sends the children its first delivery may have left unsent, and the run to
   * finalize when nothing is outstanding.
   */
  async accept(job: Job): Promise<Acceptance> {
    const [run, marker] = await Promise.all([
      this.#runs.get(job.syncId),
      this.#runs.marker(job.syncId, jobId(job)),
    ]);
    if (run?.status !== "running") return { status: "run_over", runStatus: run?.status };
    if (!marker) return { status: "unknown" };
    if (marker.state === "pending") return { status: "run" };
    await this.#sendChildrenOnce(job.syncId, marker);
    await this.#finalizeIfDone(job.syncId);
    return { status: "already_done" };
  }

  /**
   * Commits a job's result: its records stored under the delivery's message id (one object, none
   * when it read no records), then the job counted done and its children claimed, in one
   * conditional transaction; then `#afterCommit`, which calls `freeSlot` (the delivery gives its
   * job slot back) before it sends children. Returns the outcome and the children owned.
   */
  async commit(
    job: Job,
    deliveryId: string,
    result: JobResult,
    requests: number,
    freeSlot: () => Promise<void> = async () => {},
  ): Promise<{ outcome: CommitOutcome; children: number }> {
    const { syncId } = job;
    const id = jobId(job);
    // A delivery that ran beside the one that committed writes nothing (a read is cheaper than
    // a PUT); one still racing it writes an object no marker names, expired with the run's.
    if ((await this.#runs.marker(syncId, id))?.state === "done") {
      return this.#afterCommit(job, "already_done", result, []);
    }
    let shardKey: string | undefined;
    if (result.records.length > 0) {
      shardKey = shardKeyOf(syncId, id, deliveryId);
      await this.#shards.putShard(shardKey, result.records);
    }
    const children = result.followUps.map((child) => ({
      jobId: jobId(child),
      job: JSON.stringify(child),
    }));
    const { outcome, owned } = await this.#runs.commit(syncId, id, {
      ...(shardKey === undefined ? {} : { shardKey }),
      records: result.records.length,
      requests,
      children,
    });
    return this.#afterCommit(job, outcome, result, owned, freeSlot);
  }

  /**
   * After a commit: the delivery that committed gives its slot back (`freeSlot`, so a child may
   * have it) and sends the children the job owns into the run's free slots, holding the rest
   * (`JobSlots.dispatch`); one that found the job done by another delivery sends them if that one
   * has not (should it die before sending). Then the run goes to finalize if nothing is outstanding.
   */
  async #afterCommit(
    job: Job,
    outcome: CommitOutcome,
    result: JobResult,
    owned: readonly ChildClaim[],
    freeSlot: () => Promise<void> = async () => {},
  ): Promise<{ outcome: CommitOutcome; children: number }> {
    const { syncId } = job;
    const id = jobId(job);
    if (outcome === "run_over") return { outcome, children: owned.length };
    if (outcome === "committed") {
      if (owned.length > 0) {
        await freeSlot();
        const ownedIds = new Set(owned.map((child) => child.jobId));
        await this.slots(syncId).dispatch(
          this.#config.syncJobsQueueUrl,
          result.followUps.filter((child) => ownedIds.has(jobId(child))),
        );
        await this.#runs.markChildrenSent(syncId, id);
      }
    } else {
      const committed = await this.#runs.marker(syncId, id);
      if (committed) await this.#sendChildrenOnce(syncId, committed);
    }
    await this.#finalizeIfDone(syncId);
    return { outcome, children: owned.length };
  }

  /**
   * The run's jobs are moving: a delivery started one (`at` now), or handed one back to move again
   * at `at`. Its stall clock goes forward to `at` (the scheduler ends a run whose clock stays still
   * for RUN_STALL_SECONDS), written at most once a minute per container and run.
   */
  async heartbeat(syncId: string, at: number = Date.now()): Promise<void> {
    const last = heartbeats.get(syncId);
    if (last !== undefined && at - last < HEARTBEAT_EVERY_MS) return;
    if (heartbeats.size >= HEARTBEATS_KEPT) heartbeats.clear();
    heartbeats.set(syncId, at);
    await this.#runs.heartbeat(syncId, new Date(at).toISOString());
  }

  /** Adds upstream requests a commit did not count, and 429 answers, to the run. */
  async countUpstream(syncId: string, count: { requests: number; refused: number }): Promise<void> {
    await this.#runs.countUpstream(syncId, count);
  }

  /** The run as it is now (the scheduler's watchdog reads it). */
  async get(syncId: string): Promise<RunItem | undefined> {
    return this.#runs.get(syncId);
  }

  /**
   * Takes the run for finalizing, once: a running run with nothing outstanding, or a finalizing
   * one whose finalizer has been silent past its lease. Undefined when not taken.
   */
  async takeForFinalize(syncId: string): Promise<RunItem | undefined> {
    if (!(await this.#runs.leaseFinalize(syncId, FINALIZE_LEASE_SECONDS))) return undefined;
    const run = await this.#runs.get(syncId);
    if (!run) throw new Error(`run ${syncId} vanished after it was leased`);
    return run;
  }

  /**
   * The shard of every job of the run that read records, in S3; throws when a job is not done (a
   * partial snapshot).
   */
  async committedShards(syncId: string): Promise<string[]> {
    const markers = await this.#runs.markers(syncId);
    const notDone = markers.filter((m) => m.state !== "done" || (!m.shardKey && m.records !== 0));
    if (notDone.length > 0) {
      throw new Error(
        `${notDone.length} jobs of the run are not done; the snapshot would be partial`,
      );
    }
    return markers.flatMap((m) => (m.shardKey ? [m.shardKey] : []));
  }

  /** Ends a finalizing run `complete`; throws when it was ended meanwhile. */
  async complete(syncId: string): Promise<void> {
    if (!(await this.#runs.complete(syncId))) {
      throw new Error("the run was ended while it was finalized");
    }
  }

  /** Ends a finalizing run `held` by the removal guard; throws when it was ended meanwhile. */
  async hold(syncId: string, reason: string): Promise<void> {
    if (!(await this.#runs.hold(syncId, reason))) {
      throw new Error("the run was ended while it was finalized");
    }
  }

  /** Ends a running or finalizing run `error`; true when this call ended it. */
  async fail(syncId: string, reason: string): Promise<boolean> {
    return this.#runs.fail(syncId, reason);
  }

  /** A held run whose snapshot was released and published: complete. Returns the run. */
  async release(syncId: string): Promise<RunItem | undefined> {
    await this.#runs.release(syncId);
    return this.#runs.get(syncId);
  }

  /**
   * Sends the still pending children a done job owns (their markers hold them), unless its
   * children were sent already: the delivery that committed it died before sending them, or is
   * about to (a copy then is harmless).
   */
  async #sendChildrenOnce(syncId: string, marker: JobMarker): Promise<void> {
    if (marker.childrenSent !== false) return;
    const pending = await this.#runs.pendingChildren(syncId, marker.jobId);
    await this.slots(syncId).dispatch(
      this.#config.syncJobsQueueUrl,
      pending.flatMap((child) => (child.job ? [parseJob(JSON.parse(child.job))] : [])),
    );
    await this.#runs.markChildrenSent(syncId, marker.jobId);
  }

  /** The run's job slots and held jobs (`INSTANCE_JOBS_IN_FLIGHT` of them in flight at once). */
  slots(syncId: string): JobSlots {
    return new JobSlots(this.#config.runsTable, syncId, this.#config.instanceJobsInFlight);
  }

  /**
   * Sends held jobs of the run into its free slots: after a delivery gave its slot back, held a
   * job, or found its job done (`finished`: a slot reserved for that copy is free; the delivery
   * that did it may have died before it released).
   */
  async releaseHeld(syncId: string, finished?: string): Promise<number> {
    return this.slots(syncId).releaseIntoFreeSlots(this.#config.syncJobsQueueUrl, finished);
  }

  /** Sends the finalize message once nothing is outstanding (finalize takes a run only once). */
  async #finalizeIfDone(syncId: string): Promise<void> {
    const run = await this.#runs.get(syncId);
    if (run?.status === "running" && run.outstanding === 0 && !run.finalizeRequested) {
      await sendFinalize(this.#config.finalizeQueueUrl, { syncId });
      await this.#runs.markFinalizeRequested(syncId);
    }
  }
}
