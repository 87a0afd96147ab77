import { ACTION_ERROR_CODES } from "../actions";
import { messageOf } from "../errors";
import type { Logger } from "../logging";
import type { PlatformTask, TaskOutcome, UploadResult } from "../platform";
import type { ServiceConfig } from "./config";
import { RELEASE_SERVICE_COMMAND } from "./describeFailure";
import { HeldSnapshot } from "./HeldSnapshot";
import { type HttpEndpoint, json, type Routes, startHttpEndpoint } from "./httpEndpoint";
import { LoopWatch } from "./loopWatch";
import { failureKindOf, Readiness } from "./readiness";
import { ServiceSync, type ServiceSyncParts, type SyncOutcome } from "./ServiceSync";
import { ServiceMetrics } from "./serviceMetrics";
import type { StatusReport } from "./statusReport";
import { type SyncEntry, SyncHistory } from "./syncHistory";

/** How many syncs `/status` lists. */
export const STATUS_SYNCS = 20;

const ACTIONS: ReadonlySet<string> = new Set([
  "enable_user",
  "disable_user",
  "create_account",
  "grant",
  "revoke",
]);
const ACTION_CODES: ReadonlySet<string> = new Set(ACTION_ERROR_CODES);

/**
 * What the service tells about itself over HTTP when CONNECTOR_HTTP_PORT is set (docs/service.md):
 * `/livez`, `/readyz`, `/metrics` and `/status`, from what the loop reports here: syncs as
 * they end, uploads, tasks, the platform's answers and failures. Kept whether or not anything
 * listens, so a listener is the only difference the setting makes.
 */
export class ServiceMonitor {
  readonly metrics: ServiceMetrics;
  readonly history = new SyncHistory(STATUS_SYNCS);
  readonly readiness = new Readiness();
  readonly #config: ServiceConfig;
  readonly #version: string;
  readonly #logger: Logger;
  readonly #held: HeldSnapshot;
  readonly #startedAt = new Date().toISOString();
  #loop: LoopWatch | undefined;
  #endpoint: HttpEndpoint | undefined;
  #nextSyncAt = 0;

  constructor(config: ServiceConfig, version: string, logger: Logger) {
    this.#config = config;
    this.#version = version;
    this.#logger = logger;
    this.#held = new HeldSnapshot(config.stateDir);
    this.metrics = new ServiceMetrics(
      { connector: config.connector, hostId: config.platform.hostId, version },
      { ready: () => this.readiness.problems().length === 0 },
    );
  }

  /** Listens when CONNECTOR_HTTP_PORT is set; a port that cannot be taken throws (exit 2). */
  async start(): Promise<void> {
    if (!this.#config.http) return;
    this.metrics.collectProcessMetrics();
    this.#loop = new LoopWatch();
    this.#endpoint = await startHttpEndpoint(this.#config.http, this.#routes(), this.#logger);
  }

  /** Where the endpoint is (undefined when nothing listens). */
  get url(): string | undefined {
    return this.#endpoint?.url;
  }

  /** The stop began: `/readyz` says so until the listener closes. */
  stopping(): void {
    this.readiness.stopping();
  }

  /** Closes the listener (once; later calls do nothing). */
  async close(): Promise<void> {
    this.#loop?.stop();
    const endpoint = this.#endpoint;
    if (!endpoint) return;
    this.#endpoint = undefined;
    await endpoint.close();
    this.#logger.info("monitoring endpoint closed");
  }

  /** The platform answered `hello`. */
  platformReached(): void {
    this.readiness.platformReached();
  }

  /** The loop caught `error` and waits (the platform's failure, or this host's). */
  loopFailed(error: unknown): void {
    const kind = failureKindOf(error, "platform");
    this.readiness.failed(
      kind.startsWith("platform_") ? "platform" : "upstream",
      kind,
      messageOf(error),
    );
  }

  uploaded(result: UploadResult): void {
    this.metrics.uploaded(result.bytes);
  }

  syncEnded(
    trigger: SyncEntry["trigger"],
    startedAt: number,
    outcome: SyncOutcome,
    nextSyncAt: number,
  ): void {
    this.#nextSyncAt = nextSyncAt;
    const endedAt = Date.now();
    const entry: SyncEntry = {
      syncId: outcome.syncId,
      trigger,
      startedAt: new Date(startedAt).toISOString(),
      endedAt: new Date(endedAt).toISOString(),
      durationMs: endedAt - startedAt,
      outcome: outcome.status,
    };
    let counters: Parameters<ServiceMetrics["syncEnded"]>[1];
    if (outcome.status === "uploaded" || outcome.status === "held") {
      const { summary } = outcome;
      Object.assign(entry, {
        counts: { ...summary.counts },
        requests: summary.requests,
        retries: summary.retries,
        rateLimitWaits: summary.rateLimitWaits,
      });
      if (outcome.status === "uploaded") entry.bytes = outcome.upload.bytes;
      else entry.reason = outcome.detail;
      counters = outcome.counters;
      this.readiness.upstreamReached();
    } else if (outcome.status === "error") {
      const failure = failureKindOf(
        outcome.error,
        outcome.stage === "upload" ? "platform" : "upstream",
      );
      Object.assign(entry, {
        requests: outcome.counters.requests,
        retries: outcome.counters.retries,
        rateLimitWaits: outcome.counters.rateLimitWaits,
        reason: outcome.detail,
        failure,
      });
      counters = outcome.counters;
      if (outcome.stage === "upload") this.readiness.upstreamReached();
      const side = failure.startsWith("platform_") ? "platform" : "upstream";
      this.readiness.failed(side, failure, outcome.detail);
    }
    this.history.add(entry);
    this.metrics.syncEnded(entry, counters);
  }

  taskEnded(task: PlatformTask, outcome: TaskOutcome): void {
    const succeeded = outcome.status === "succeeded";
    this.metrics.taskEnded(task.type, succeeded);
    if (task.type !== "action") return;
    const action = (task.request as { action?: unknown } | null)?.action;
    const code = (outcome.error as { code?: unknown } | undefined)?.code;
    this.metrics.actionEnded(
      typeof action === "string" && ACTIONS.has(action) ? action : "invalid",
      succeeded ? "succeeded" : typeof code === "string" && ACTION_CODES.has(code) ? code : "other",
    );
  }

  #routes(): Routes {
    return {
      "/livez": () => {
        const loop = this.#loop?.check();
        return json(loop?.alive === false ? 503 : 200, { alive: loop?.alive ?? true, ...loop });
      },
      "/readyz": () => {
        const problems = this.readiness.problems();
        return json(problems.length === 0 ? 200 : 503, { ready: problems.length === 0, problems });
      },
      "/metrics": async () => ({
        status: 200,
        contentType: this.metrics.contentType,
        body: await this.metrics.text(),
      }),
      "/status": async () => json(200, await this.#status()),
    };
  }

  async #status(): Promise<StatusReport> {
    const digest = await this.#held.held().catch(() => undefined);
    const problems = this.readiness.problems();
    return {
      connector: this.#config.connector,
      hostId: this.#config.platform.hostId,
      version: this.#version,
      startedAt: this.#startedAt,
      ready: problems.length === 0,
      problems,
      nextSyncAt: this.#nextSyncAt > 0 ? new Date(this.#nextSyncAt).toISOString() : undefined,
      syncs: [...this.history.entries],
      held: digest
        ? {
            syncId: digest.syncId,
            users: digest.users.length,
            grants: digest.grants.length,
            release: RELEASE_SERVICE_COMMAND,
          }
        : null,
    };
  }
}

/** The service's syncs, each reported to the monitor as it ends. */
export class MonitoredSync extends ServiceSync {
  readonly #monitor: ServiceMonitor;

  constructor(parts: ServiceSyncParts, monitor: ServiceMonitor) {
    super(parts);
    this.#monitor = monitor;
  }

  override async sync(taskId: string | undefined): Promise<SyncOutcome> {
    const startedAt = Date.now();
    const outcome = await super.sync(taskId);
    this.#monitor.syncEnded(taskId ? "task" : "schedule", startedAt, outcome, this.nextSyncAt);
    return outcome;
  }
}
