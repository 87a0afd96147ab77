import { messageOf } from "../errors";
import type { Logger } from "../logging";
import type { ServiceConfig } from "./config";
import { HEALTH_WRITE_INTERVAL_MS } from "./constants";
import { HealthFile, type HealthState } from "./HealthFile";

/**
 * What the health file says, kept up to date: every change is written at once, and the file is
 * rewritten every HEALTH_WRITE_INTERVAL_MS between changes (a long sync included), so a probe
 * tells a live service from a hung one. The status follows from the rest: `starting` until the
 * platform first answers, then `degraded` while the platform cannot be reached, a failure is
 * waited out, or the last sync failed or was held, else `ok`.
 */
export class ServiceHealth {
  readonly #file: HealthFile;
  readonly #logger: Logger;
  #state: HealthState;
  #timer: NodeJS.Timeout | undefined;
  #writable = true;
  #everConnected = false;

  constructor(config: ServiceConfig, version: string, logger: Logger) {
    this.#file = new HealthFile(config.healthFile);
    this.#logger = logger;
    this.#state = {
      status: "starting",
      phase: "connecting",
      connector: config.connector,
      hostId: config.platform.hostId,
      version,
      startedAt: new Date().toISOString(),
      platform: { reachable: false },
    };
  }

  /** Writes the file now and every interval until `stopWriting`. */
  startWriting(): void {
    this.#timer = setInterval(() => this.#write(), HEALTH_WRITE_INTERVAL_MS);
    this.#write();
  }

  stopWriting(): void {
    clearInterval(this.#timer);
  }

  update(patch: Partial<HealthState>): void {
    const next = { ...this.#state, ...patch };
    if (next.platform.reachable) next.platform = { reachable: true };
    if (next.status !== "stopping" && next.status !== "stopped") {
      const troubled =
        !next.platform.reachable ||
        next.problem !== undefined ||
        next.lastSync?.outcome === "error" ||
        next.lastSync?.outcome === "held";
      next.status = !this.#everConnected ? "starting" : troubled ? "degraded" : "ok";
    }
    this.#state = next;
    this.#write();
  }

  /** The platform answered `hello`: the service is no longer starting. */
  connected(): void {
    this.#everConnected = true;
  }

  /** The platform answered: a problem said before is over. */
  reachable(): void {
    if (!this.#state.platform.reachable || this.#state.problem !== undefined) {
      this.update({ platform: { reachable: true }, problem: undefined });
    }
  }

  /** The loop waits after a failure: the platform's (unreachable since it first failed) or this host's. */
  waiting(problem: string, ofPlatform: boolean): void {
    this.update(
      ofPlatform
        ? {
            phase: "waiting",
            platform: {
              reachable: false,
              problem,
              since: this.#state.platform.since ?? new Date().toISOString(),
            },
          }
        : { phase: "waiting", problem },
    );
  }

  /** The last write, once the service has stopped. */
  async stopped(): Promise<void> {
    this.update({ status: "stopped", phase: "stopped" });
    await this.#file.write(this.#state);
  }

  /** Logs when the file stops being writable (with the reason: the path and what to free) and when it is again. */
  #write(): void {
    void this.#file.write(this.#state).then((error) => {
      const written = error === undefined;
      if (written === this.#writable) return;
      this.#writable = written;
      if (written) this.#logger.info("the health file is written again", { path: this.#file.path });
      else
        this.#logger.warn("the health file cannot be written", {
          path: this.#file.path,
          reason: messageOf(error),
        });
    });
  }
}
