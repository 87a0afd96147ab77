import type { TaskOutcome } from "../platform";
import type { JsonLogger } from "./jsonLogger";
import type { PlatformLink } from "./PlatformLink";
import { isRefusal } from "./platformErrors";
import type { LabelReport, ServiceState } from "./ServiceState";

/**
 * What the service owes the platform, kept in the state file until delivered (a small outbox): the
 * last label, and the finishes of tasks. A platform that is away when they are due gets them when
 * it is back; one that refuses one for good (a 4xx) has it dropped, with a warning.
 */
export class Reports {
  readonly #link: PlatformLink;
  readonly #state: ServiceState;
  readonly #logger: JsonLogger;
  readonly #stop: AbortSignal;

  constructor(link: PlatformLink, state: ServiceState, logger: JsonLogger, stop: AbortSignal) {
    this.#link = link;
    this.#state = state;
    this.#logger = logger;
    this.#stop = stop;
  }

  /** How many reports wait for the platform. */
  get pending(): number {
    const label = this.#state.label;
    return (label && !label.delivered ? 1 : 0) + this.#state.finishes.length;
  }

  /**
   * Records the label to report and tries to deliver it. When `required`, a failure to deliver
   * is thrown (the caller waits for the platform); otherwise the label stays in the outbox and
   * the loop (or the stop) delivers it.
   */
  async label(label: LabelReport, required = false): Promise<void> {
    await this.#state.setLabel(label);
    try {
      await this.#link.call((_, signal) => this.#deliverLabel(signal));
    } catch (error) {
      if (required) throw error;
      if (this.#stop.aborted) return;
      this.#logger.warn("the label could not be reported yet; it will be", {
        label: label.label,
        error,
      });
    }
  }

  /** Queues a task's finish, for `deliver`. */
  async finish(taskId: string, outcome: TaskOutcome): Promise<void> {
    await this.#state.queueFinish({ taskId, outcome });
  }

  /** Delivers the label and the task finishes not delivered yet; a failure to reach the platform is thrown. */
  async deliver(signal: AbortSignal): Promise<void> {
    await this.#deliverLabel(signal);
    for (const finish of [...this.#state.finishes]) {
      try {
        await this.#link.client.finishTask(finish.taskId, finish.outcome, { signal });
        this.#logger.info("task finished", {
          taskId: finish.taskId,
          status: finish.outcome.status,
        });
      } catch (error) {
        if (!isRefusal(error)) throw error;
        this.#logger.warn("the platform refused the task's finish; it is dropped", {
          taskId: finish.taskId,
          error,
        });
      }
      await this.#state.dropFinish(finish.taskId);
    }
  }

  async #deliverLabel(signal: AbortSignal): Promise<void> {
    const label = this.#state.label;
    if (!label || label.delivered) return;
    try {
      await this.#link.client.setStatus(label.label, label.detail, { signal });
      this.#logger.info("label reported", { label: label.label, detail: label.detail });
    } catch (error) {
      if (!isRefusal(error)) throw error;
      this.#logger.warn("the platform refused the label", { label: label.label, error });
    }
    await this.#state.setLabel({ ...label, delivered: true });
  }
}
