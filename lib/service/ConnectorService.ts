import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Environment } from "../config/environment";
import { connectorNamed, UpstreamConnectors } from "../connectors";
import { ConnectorError } from "../errors";
import { AbortedError } from "../http";
import type { ServiceConfig } from "./config";
import { SHUTDOWN_CALL_TIMEOUT_MS, STATE_FILE_NAME, TEMP_DIR_NAME } from "./constants";
import type { JsonLogger } from "./jsonLogger";
import { PlatformLink } from "./PlatformLink";
import { Reports } from "./Reports";
import { ServiceHealth } from "./ServiceHealth";
import { MonitoredSync, ServiceMonitor } from "./ServiceMonitor";
import { ServiceState } from "./ServiceState";
import type { ServiceSync } from "./ServiceSync";
import { lockStateDir } from "./stateDirLock";
import { TaskRunner } from "./TaskRunner";

export interface ServiceOptions {
  config: ServiceConfig;
  /**
   * The variables as they are now. Read again before each sync and action, and when the platform
   * rejects its credentials, so a rotated `*_FILE` secret takes effect without a restart.
   */
  readEnv: () => Environment;
  logger: JsonLogger;
  version: string;
}

/** The service's duties once its state file is open. */
interface Duties {
  state: ServiceState;
  reports: Reports;
  sync: ServiceSync;
  tasks: TaskRunner;
}

/**
 * Self-hosted service mode (docs/service.md): announces itself, syncs at start and every
 * interval, and between syncs polls for tasks (actions, on-demand syncs), sending heartbeats while
 * one runs. Labels and task finishes go through a small outbox kept in the state file, so a
 * platform that is away when they are due gets them when it is back. Whatever fails, the loop
 * backs off and goes on; only `stop` ends it: the sync in progress is abandoned (nothing is
 * uploaded, its files are removed), and what must be reported is reported.
 *
 * This file is the loop; each duty has its own: the platform connection (PlatformLink.ts), the
 * outbox (Reports.ts), syncs and their guarded publish and release (ServiceSync.ts), tasks with
 * their heartbeats (TaskRunner.ts), actions replayed by requestId (actionTask.ts), the health
 * file (ServiceHealth.ts), the HTTP endpoint and its metrics (ServiceMonitor.ts), the state
 * directory's lock (stateDirLock.ts).
 */
export class ConnectorService {
  readonly #options: ServiceOptions;
  readonly #logger: JsonLogger;
  readonly #stop = new AbortController();
  readonly #health: ServiceHealth;
  readonly #monitor: ServiceMonitor;
  readonly #link: PlatformLink;
  readonly #tempDir: string;

  constructor(options: ServiceOptions) {
    this.#options = options;
    this.#logger = options.logger;
    this.#health = new ServiceHealth(options.config, options.version, options.logger);
    this.#monitor = new ServiceMonitor(options.config, options.version, options.logger);
    this.#link = new PlatformLink({
      config: options.config,
      version: options.version,
      readEnv: options.readEnv,
      logger: options.logger,
      health: this.#health,
      stop: this.#stop.signal,
      onUpload: (result) => this.#monitor.uploaded(result),
    });
    this.#tempDir = join(options.config.stateDir, TEMP_DIR_NAME);
  }

  /** Where a sync's temporary files are; removed at start and at stop. */
  get tempDir(): string {
    return this.#tempDir;
  }

  get stopping(): boolean {
    return this.#stop.signal.aborted;
  }

  /** Stops taking work and abandons a sync in progress; `run` then reports and returns. */
  stop(reason: string): void {
    if (this.stopping) return;
    this.#logger.info("stopping", { reason });
    this.#stop.abort(new AbortedError(`the service is stopping (${reason})`));
    this.#monitor.stopping();
    this.#health.update({ status: "stopping", phase: "stopping" });
  }

  /**
   * Runs until `stop`; never throws for a failure of the platform or the upstream. Throws (exit 2)
   * when another service holds the state directory or the HTTP port cannot be taken.
   */
  async run(): Promise<void> {
    const { config } = this.#options;
    let lost: Error | undefined;
    const lock = await lockStateDir(config.stateDir, config.platform.hostId, (error) => {
      lost = error;
      this.#logger.error("the state directory's lock was lost: stopping", { error });
      this.stop("the state directory's lock was lost");
    });
    try {
      await this.#monitor.start();
      await this.#runLocked();
    } finally {
      await this.#monitor.close();
      await lock.release();
    }
    if (lost) throw new ConnectorError(`the lock on ${config.stateDir} was lost: ${lost.message}`);
  }

  async #runLocked(): Promise<void> {
    const { config } = this.#options;
    const state = await ServiceState.open(join(config.stateDir, STATE_FILE_NAME), this.#logger);
    await rm(this.#tempDir, { recursive: true, force: true });
    await mkdir(this.#tempDir, { recursive: true });
    this.#health.startWriting();
    this.#logger.info("service started", {
      version: this.#options.version,
      syncIntervalSeconds: config.platform.syncIntervalMs / 1000,
      stateDir: config.stateDir,
      healthFile: config.healthFile,
      monitoringUrl: this.#monitor.url,
      repliesRemembered: state.repliesRemembered,
    });
    const duties = this.#duties(state);
    try {
      await this.#loop(duties);
    } finally {
      await this.#shutdown(duties);
    }
  }

  #duties(state: ServiceState): Duties {
    const { config, readEnv } = this.#options;
    const logger = this.#logger;
    const stop = this.#stop.signal;
    const health = this.#health;
    const link = this.#link;
    const upstream = new UpstreamConnectors(connectorNamed(config.connector), readEnv);
    const reports = new Reports(link, state, logger, stop);
    const tempDir = this.#tempDir;
    const sync = new MonitoredSync(
      {
        config,
        readEnv,
        logger,
        stop,
        tempDir,
        upstream,
        state,
        health,
        link,
        reports,
      },
      this.#monitor,
    );
    const monitor = this.#monitor;
    const tasks = new TaskRunner({
      logger,
      stop,
      state,
      upstream,
      health,
      link,
      reports,
      sync,
      monitor,
    });
    return { state, reports, sync, tasks };
  }

  async #loop({ reports, sync, tasks }: Duties): Promise<void> {
    const { signal } = this.#stop;
    const link = this.#link;
    while (!signal.aborted) {
      try {
        if (!link.connected) {
          await link.hello();
          this.#monitor.platformReached();
        }
        await link.call((_, call) => reports.deliver(call));
        if (tasks.pending) {
          await tasks.run(tasks.pending);
          continue;
        }
        const release = await sync.releaseRequested();
        if (release) {
          await sync.release(release.syncId);
          continue;
        }
        if (Date.now() >= sync.nextSyncAt) {
          await sync.sync(undefined);
          continue;
        }
        const task = await link.call((client, call) => client.nextTask({ signal: call }));
        link.reachable();
        if (task) {
          await tasks.run(task);
          continue;
        }
        this.#health.update({ phase: "idle" });
        await sleep(Math.min(link.pollMs, sync.nextSyncAt - Date.now()), undefined, { signal });
      } catch (error) {
        if (signal.aborted) break;
        this.#monitor.loopFailed(error);
        await link.waitAfter(error);
      }
    }
  }

  /** After the loop: reports what a stop leaves to report, removes temporary files; never throws. */
  async #shutdown({ state, reports, sync }: Duties): Promise<void> {
    this.#health.stopWriting();
    await this.#monitor.close();
    try {
      if (sync.restoreLabel) await state.setLabel(sync.restoreLabel);
      if (reports.pending > 0) {
        await reports.deliver(AbortSignal.timeout(SHUTDOWN_CALL_TIMEOUT_MS));
      }
    } catch (error) {
      this.#logger.warn("reports left for the next start: the platform did not take them", {
        error,
        finishes: state.finishes.length,
      });
    }
    await rm(this.#tempDir, { recursive: true, force: true }).catch((error: unknown) => {
      this.#logger.error("the temporary directory cannot be removed", {
        path: this.#tempDir,
        error,
      });
    });
    await this.#health.stopped();
    this.#logger.info("service stopped");
  }
}
