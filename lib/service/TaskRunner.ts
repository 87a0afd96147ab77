import type { UpstreamConnectors } from "../connectors";
import type { PlatformTask, TaskOutcome } from "../platform";
import { runActionTask } from "./actionTask";
import { HEARTBEAT_BOUNDS_MS } from "./constants";
import type { JsonLogger } from "./jsonLogger";
import type { PlatformLink } from "./PlatformLink";
import type { Reports } from "./Reports";
import type { ServiceHealth } from "./ServiceHealth";
import type { ServiceMonitor } from "./ServiceMonitor";
import type { ServiceState } from "./ServiceState";
import type { ServiceSync, SyncOutcome } from "./ServiceSync";
import { startHeartbeats } from "./startHeartbeats";

export interface TaskRunnerParts {
  logger: JsonLogger;
  stop: AbortSignal;
  state: ServiceState;
  upstream: UpstreamConnectors;
  health: ServiceHealth;
  link: PlatformLink;
  reports: Reports;
  sync: ServiceSync;
  /** Counts tasks and actions by outcome (/metrics). */
  monitor: Pick<ServiceMonitor, "taskEnded">;
}

/**
 * The tasks the platform hands out: a sync now, or an action. Heartbeats go while one runs; its
 * finish goes through the outbox. A task is pending from when it is taken until its finish is
 * queued, so one interrupted by a platform outage is run again (an action then answers with its
 * remembered reply).
 */
export class TaskRunner {
  readonly #parts: TaskRunnerParts;
  #pending: PlatformTask | undefined;

  constructor(parts: TaskRunnerParts) {
    this.#parts = parts;
  }

  /** A task taken and not finished yet. */
  get pending(): PlatformTask | undefined {
    return this.#pending;
  }

  /** Runs a task, then queues its finish and delivers it. */
  async run(task: PlatformTask): Promise<void> {
    const { link, reports, health, stop } = this.#parts;
    this.#pending = task;
    const logger = this.#parts.logger.child({ taskId: task.id });
    health.update({ phase: "task" });
    const heartbeatMs = Math.min(
      HEARTBEAT_BOUNDS_MS.max,
      Math.max(HEARTBEAT_BOUNDS_MS.min, link.pollMs),
    );
    const heartbeats = startHeartbeats(link.client, task.id, heartbeatMs, logger);
    let outcome: TaskOutcome;
    try {
      if (task.type === "sync") {
        logger.info("sync task received");
        outcome = syncTaskOutcome(await this.#parts.sync.sync(task.id));
      } else {
        const { state, upstream } = this.#parts;
        const reply = await runActionTask(task.request, { state, upstream, stop, logger });
        outcome =
          reply.status === "succeeded"
            ? { status: "succeeded", result: reply.result }
            : { status: "failed", error: reply.error };
      }
    } finally {
      await heartbeats.stop();
    }
    this.#parts.monitor.taskEnded(task, outcome);
    await reports.finish(task.id, outcome);
    this.#pending = undefined;
    if (!stop.aborted) await link.call((_, signal) => reports.deliver(signal));
  }
}

function syncTaskOutcome(outcome: SyncOutcome): TaskOutcome {
  switch (outcome.status) {
    case "uploaded":
      return {
        status: "succeeded",
        result: {
          syncId: outcome.syncId,
          counts: outcome.summary.counts,
          bytes: outcome.upload.bytes,
        },
      };
    case "error":
      return {
        status: "failed",
        error: { code: "sync_failed", message: outcome.detail, retryable: true },
      };
    case "held":
      return {
        status: "failed",
        error: { code: "snapshot_held", message: outcome.detail, retryable: false },
      };
    case "abandoned":
      return {
        status: "failed",
        error: {
          code: "shutting_down",
          message: `the connector host stopped during the sync ${outcome.syncId}; nothing was uploaded`,
          retryable: true,
        },
      };
  }
}
