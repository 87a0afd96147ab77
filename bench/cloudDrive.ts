/**
 * Runs a cloud stage's queues the way Lambda does while runs are under way: the worker's and
 * finalize's mappings polled at once (each up to its maximum concurrency), until every run named
 * has ended, with a progress line on stderr every `PROGRESS_EVERY_MS` (a long run on a loaded
 * machine shows that it moves, and how fast).
 */
import type { RunStore } from "../lib/cloud";
import type { DrainOptions, DrainStats, Stack } from "../test/aws/harness";

/** A bench run drains until its runs are done: no cap on invocations, three hours at most. */
export const UNBOUNDED_DRAIN = {
  maxInvocations: Number.POSITIVE_INFINITY,
  timeoutMs: 3 * 3_600_000,
};

const PROGRESS_EVERY_MS = 15_000;

/** Whether a run has ended (or was never opened). */
export async function runEnded(runs: RunStore, syncId: string): Promise<boolean> {
  const status = (await runs.get(syncId))?.status;
  return status !== "running" && status !== "finalizing";
}

export interface Drained {
  worker: DrainStats;
  finalize: DrainStats;
}

/**
 * Drains both queues until every run of `syncIds()` has ended. `syncIds` is read on each check,
 * so a run started meanwhile (the tenants bench) is waited for too; while it answers undefined a
 * run is still to come, and the queues are drained on even if every run so far has ended.
 */
export async function driveToEnd(
  stack: Stack,
  runs: RunStore,
  syncIds: () => readonly string[] | undefined,
  label: string,
  workerOptions: Pick<DrainOptions, "onBatch" | "onInvoked"> = {},
  finalizeOptions: Pick<DrainOptions, "onBatch" | "onInvoked"> = {},
): Promise<Drained> {
  const until = async () => {
    const ids = syncIds();
    return (
      ids !== undefined && (await Promise.all(ids.map((id) => runEnded(runs, id)))).every(Boolean)
    );
  };
  const started = performance.now();
  const progress = setInterval(() => {
    void (async () => {
      const states = await Promise.all((syncIds() ?? []).map((id) => runs.get(id)));
      const text = states
        .map(
          (r) => `${r?.status ?? "?"} ${r?.jobsDone ?? 0} done ${r?.outstanding ?? 0} outstanding`,
        )
        .join("; ");
      const minutes = ((performance.now() - started) / 60_000).toFixed(1);
      process.stderr.write(`bench: ${label} ${minutes} min: ${text}\n`);
    })().catch(() => {});
  }, PROGRESS_EVERY_MS);
  try {
    const [worker, finalize] = await Promise.all([
      stack.drainQueue("syncWorker", { ...UNBOUNDED_DRAIN, until, ...workerOptions }),
      stack.drainQueue("finalize", { ...UNBOUNDED_DRAIN, until, ...finalizeOptions }),
    ]);
    return { worker, finalize };
  } finally {
    clearInterval(progress);
  }
}
