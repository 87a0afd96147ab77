import { createHash, randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  ActionError,
  type ActionReply,
  actionRequest,
  failedReply,
  type Provisioner,
  runAction,
} from "../actions";
import type { Environment } from "../config/environment";
import { ConfigError } from "../errors";
import {
  digestSnapshotFile,
  judgeRemoval,
  MAX_REMOVAL_VARIABLE,
  parseRemovalLimit,
  type SnapshotDigest,
} from "../guard";
import { AbortedError, NetworkError, newRequestContext } from "../http";
import {
  isRetryablePlatformStatus,
  loadPlatformConfig,
  PlatformClient,
  PlatformCredentialsError,
  PlatformResponseError,
  PlatformStatusError,
  type PlatformTask,
  type TaskOutcome,
  type UploadResult,
} from "../platform";
import { redact } from "../redact";
import { runLocalSync, type SyncSummary } from "../sync";
import { Backoff } from "./Backoff";
import type { ServiceConfig } from "./config";
import {
  ACTION_GRACE_MS,
  HEALTH_WRITE_INTERVAL_MS,
  HEARTBEAT_BOUNDS_MS,
  PLATFORM_BACKOFF,
  SERVICE_PLATFORM_RETRY,
  SHUTDOWN_CALL_TIMEOUT_MS,
  STATE_FILE_NAME,
  TEMP_DIR_NAME,
} from "./constants";
import { describeHeldSync, describeSyncFailure, describeUploadFailure } from "./describeFailure";
import { HealthFile, type HealthState } from "./HealthFile";
import { HeldSnapshot } from "./HeldSnapshot";
import type { JsonLogger } from "./jsonLogger";
import { linkedSignal } from "./linkedSignal";
import { type LabelReport, ServiceState } from "./ServiceState";
import { startHeartbeats } from "./startHeartbeats";
import { UpstreamConnectors } from "./UpstreamConnectors";

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

/** How one sync ended. */
type SyncOutcome =
  | { status: "uploaded"; syncId: string; summary: SyncSummary; upload: UploadResult }
  | { status: "error"; syncId: string; detail: string }
  | { status: "held"; syncId: string; detail: string }
  | { status: "abandoned"; syncId: string };

/** Poll interval until `hello` says otherwise. */
const DEFAULT_POLL_MS = 5_000;

/**
 * Self-hosted service mode (CONTRACTS.md section 5): announces itself, syncs at start and every
 * interval, and between syncs polls for tasks (actions, on-demand syncs), sending heartbeats while
 * one runs. Labels and task finishes go through a small outbox kept in the state file, so a
 * platform that is away when they are due gets them when it is back. Whatever fails, the loop
 * backs off and goes on; only `stop` ends it: the sync in progress is abandoned (nothing is
 * uploaded, its files are removed), and what must be reported is reported.
 */
export class ConnectorService {
  readonly #options: ServiceOptions;
  readonly #config: ServiceConfig;
  readonly #logger: JsonLogger;
  readonly #stop = new AbortController();
  readonly #backoff = new Backoff(PLATFORM_BACKOFF);
  readonly #health: HealthFile;
  readonly #tempDir: string;
  readonly #upstream: UpstreamConnectors;
  /** The mass-deletion guard's files: the last upload's digest, a held snapshot, its release. */
  readonly #held: HeldSnapshot;
  #healthState: HealthState;
  #healthTimer: NodeJS.Timeout | undefined;
  #healthWritable = true;
  #platform: PlatformClient;
  #state: ServiceState | undefined;
  #connected = false;
  #everConnected = false;
  #pollMs = DEFAULT_POLL_MS;
  #nextSyncAt = 0;
  /** A task handed out and not finished yet: tried again after a platform outage. */
  #pendingTask: PlatformTask | undefined;
  /** Set when a stop abandons a sync: the label to report instead of `syncing`. */
  #restoreLabel: LabelReport | undefined;

  constructor(options: ServiceOptions) {
    this.#options = options;
    this.#config = options.config;
    this.#logger = options.logger;
    this.#platform = this.#newPlatformClient(options.config.platform);
    this.#health = new HealthFile(options.config.healthFile);
    this.#tempDir = join(options.config.stateDir, TEMP_DIR_NAME);
    this.#upstream = new UpstreamConnectors(options.config.connector, options.readEnv);
    this.#held = new HeldSnapshot(options.config.stateDir);
    this.#healthState = {
      status: "starting",
      phase: "connecting",
      connector: options.config.connector,
      hostId: options.config.platform.hostId,
      version: options.version,
      startedAt: new Date().toISOString(),
      platform: { reachable: false },
    };
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
    this.#updateHealth({ status: "stopping", phase: "stopping" });
  }

  /** Runs `work` with a signal that aborts on `stop` and lives only as long as the work. */
  async #scoped<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const { signal, release } = linkedSignal(this.#stop.signal);
    try {
      return await work(signal);
    } finally {
      release();
    }
  }

  /** Runs until `stop`; never throws for a failure of the platform or the upstream. */
  async run(): Promise<void> {
    const { config } = this.#options;
    this.#state = await ServiceState.open(join(config.stateDir, STATE_FILE_NAME), this.#logger);
    await rm(this.#tempDir, { recursive: true, force: true });
    await mkdir(this.#tempDir, { recursive: true });
    this.#healthTimer = setInterval(() => this.#writeHealth(), HEALTH_WRITE_INTERVAL_MS);
    this.#writeHealth();
    this.#logger.info("service started", {
      version: this.#options.version,
      syncIntervalSeconds: config.platform.syncIntervalMs / 1000,
      stateDir: config.stateDir,
      healthFile: config.healthFile,
      repliesRemembered: this.#state.repliesRemembered,
    });
    try {
      await this.#loop(this.#state);
    } finally {
      await this.#shutdown(this.#state);
    }
  }

  async #loop(state: ServiceState): Promise<void> {
    const { signal } = this.#stop;
    while (!signal.aborted) {
      try {
        if (!this.#connected) await this.#hello();
        await this.#scoped((call) => this.#deliverReports(state, call));
        if (this.#pendingTask) {
          await this.#runTask(this.#pendingTask, state);
          continue;
        }
        const release = await this.#held.releaseRequested();
        if (release) {
          await this.#release(state, release.syncId);
          continue;
        }
        if (Date.now() >= this.#nextSyncAt) {
          await this.#sync(state, undefined);
          continue;
        }
        const task = await this.#scoped((call) => this.#platform.nextTask({ signal: call }));
        this.#reachable();
        if (task) {
          this.#pendingTask = task;
          await this.#runTask(task, state);
          continue;
        }
        this.#updateHealth({ phase: "idle" });
        await sleep(Math.min(this.#pollMs, this.#nextSyncAt - Date.now()), undefined, { signal });
      } catch (error) {
        if (signal.aborted) break;
        await this.#waitAfter(error);
      }
    }
  }

  async #hello(): Promise<void> {
    this.#updateHealth({ phase: "connecting" });
    const request = {
      connector: this.#config.connector,
      version: this.#options.version,
      capabilities: this.#config.capabilities,
    };
    const answer = await this.#scoped((signal) => this.#platform.hello(request, { signal }));
    this.#pollMs = answer.pollIntervalSeconds * 1000;
    this.#connected = true;
    this.#everConnected = true;
    this.#reachable();
    this.#logger.info("connected to the platform", {
      pollIntervalSeconds: answer.pollIntervalSeconds,
      capabilities: this.#config.capabilities,
    });
  }

  /** After a failure: backs off (the platform's outage, rejected credentials, anything else). */
  async #waitAfter(error: unknown): Promise<void> {
    this.#connected = false;
    const waitMs = this.#backoff.next();
    const fields = { error, waitMs, failures: this.#backoff.failures };
    if (PlatformCredentialsError.is(error)) {
      this.#logger.error("the platform rejected the credentials; reading them again after a wait", {
        ...fields,
        fix: "check CONNECTOR_CLIENT_ID and CONNECTOR_CLIENT_SECRET (or its _FILE) against the connector's credentials in the platform",
      });
      this.#reloadPlatformCredentials();
    } else if (isPlatformUnavailable(error)) {
      this.#logger.warn("the platform cannot be reached; trying again after a wait", fields);
    } else {
      this.#logger.error("unexpected failure; trying again after a wait", fields);
    }
    this.#updateHealth(
      isPlatformError(error)
        ? {
            phase: "waiting",
            platform: {
              reachable: false,
              problem: messageOf(error),
              since: this.#healthState.platform.since ?? new Date().toISOString(),
            },
          }
        : { phase: "waiting", problem: messageOf(error) },
    );
    await sleep(waitMs, undefined, { signal: this.#stop.signal }).catch(() => {});
  }

  #reachable(): void {
    this.#backoff.reset();
    if (!this.#healthState.platform.reachable || this.#healthState.problem !== undefined) {
      this.#updateHealth({ platform: { reachable: true }, problem: undefined });
    }
  }

  #reloadPlatformCredentials(): void {
    try {
      this.#platform = this.#newPlatformClient(loadPlatformConfig(this.#options.readEnv()));
    } catch (error) {
      this.#logger.error("the platform variables cannot be read again", { error });
    }
  }

  #newPlatformClient(config: ServiceConfig["platform"]): PlatformClient {
    return new PlatformClient({
      baseUrl: config.platformUrl,
      clientId: config.clientId,
      clientSecret: config.clientSecret,
      hostId: config.hostId,
      retry: SERVICE_PLATFORM_RETRY,
      logger: this.#logger,
    });
  }

  /** Runs a task handed out by the platform, then queues its finish and delivers it. */
  async #runTask(task: PlatformTask, state: ServiceState): Promise<void> {
    const logger = this.#logger.child({ taskId: task.id });
    this.#updateHealth({ phase: "task" });
    const heartbeatMs = Math.min(
      HEARTBEAT_BOUNDS_MS.max,
      Math.max(HEARTBEAT_BOUNDS_MS.min, this.#pollMs),
    );
    const heartbeats = startHeartbeats(this.#platform, task.id, heartbeatMs, logger);
    let outcome: TaskOutcome;
    try {
      if (task.type === "sync") {
        logger.info("sync task received");
        outcome = syncTaskOutcome(await this.#sync(state, task.id));
      } else {
        const reply = await this.#action(task.request, state, logger);
        outcome =
          reply.status === "succeeded"
            ? { status: "succeeded", result: reply.result }
            : { status: "failed", error: reply.error };
      }
    } finally {
      await heartbeats.stop();
    }
    await state.queueFinish({ taskId: task.id, outcome });
    this.#pendingTask = undefined;
    if (!this.stopping) await this.#scoped((signal) => this.#deliverReports(state, signal));
  }

  /**
   * Runs one action request: a malformed one is answered `invalid_request` and not remembered;
   * a `requestId` seen before gets its first reply and nothing runs; a new one runs, and its reply
   * is remembered unless it says to try again (`rate_limited`, `upstream_error`).
   */
  async #action(raw: unknown, state: ServiceState, logger: JsonLogger): Promise<ActionReply> {
    const parsed = actionRequest.safeParse(raw);
    if (!parsed.success) {
      const reply = await runAction(raw, unreachableProvisioner, newRequestContext());
      logger.warn("action request refused", { requestId: reply.requestId, error: reply });
      return reply;
    }
    const request = parsed.data;
    const log = logger.child({ requestId: request.requestId, action: request.action });
    const fingerprint = createHash("sha256").update(JSON.stringify(request)).digest("hex");
    const remembered = state.reply(request.requestId);
    if (remembered) {
      if (remembered.fingerprint !== fingerprint) {
        log.warn("requestId used before for a different request");
        return failedReply(
          request.requestId,
          "invalid_request",
          `requestId ${request.requestId} was used before for a different request; use a new requestId for a new request`,
        );
      }
      log.info("action done before; answering with its first reply", {
        status: remembered.reply.status,
      });
      return remembered.reply;
    }
    // A stop lets an action in progress finish within a grace, then aborts it.
    const grace = new AbortController();
    let graceTimer: NodeJS.Timeout | undefined;
    const onStop = () => {
      graceTimer = setTimeout(() => grace.abort(), ACTION_GRACE_MS);
    };
    this.#stop.signal.addEventListener("abort", onStop, { once: true });
    let reply: ActionReply;
    try {
      reply = await runAction(
        request,
        () => this.#provisioner(),
        newRequestContext({ logger: log, signal: grace.signal }),
      );
    } finally {
      this.#stop.signal.removeEventListener("abort", onStop);
      clearTimeout(graceTimer);
    }
    if (reply.status === "succeeded" || !reply.error.retryable) {
      await state.remember(fingerprint, reply);
    }
    if (reply.status === "succeeded") log.info("action succeeded", { result: reply.result });
    else log.warn("action failed", { code: reply.error.code, reason: reply.error.message });
    return reply;
  }

  /**
   * The provisioner from the settings as they are now. Settings that no longer read (a secret
   * file gone) are the host's fault, not the request's: the reply says to try again, so it is
   * not remembered.
   */
  #provisioner(): Provisioner {
    try {
      return this.#upstream.provisioner();
    } catch (error) {
      if (!ConfigError.is(error)) throw error;
      throw new ActionError(
        "upstream_error",
        `the connector host's configuration is not valid (${error.message}); ask again once it is fixed`,
      );
    }
  }

  /**
   * One sync: label `syncing` (which must reach the platform, or the sync waits for it), the
   * connector's jobs into a gzip snapshot under the temporary directory, the upload under the
   * sync's id, then `connected`; or `error` with a reason a person can act on, and nothing
   * uploaded. A stop abandons it: no upload, the label goes back to what it was.
   */
  async #sync(state: ServiceState, taskId: string | undefined): Promise<SyncOutcome> {
    const { connector, platform } = this.#config;
    const syncId = randomUUID();
    const logger = this.#logger.child({ syncId, connectorId: platform.hostId });
    const before = state.label;
    try {
      await this.#report(state, { label: "syncing", delivered: false }, true);
    } catch (error) {
      // The sync waits for the platform; its label must not be reported later on its own.
      if (before) await state.setLabel(before);
      throw error;
    }
    const startedAt = Date.now();
    this.#nextSyncAt = startedAt + platform.syncIntervalMs;
    const nextSyncAt = new Date(this.#nextSyncAt);
    this.#updateHealth({ phase: "syncing", nextSyncAt: nextSyncAt.toISOString() });
    logger.info("sync started", { trigger: taskId ? "task" : "schedule", taskId });
    const dir = await mkdtemp(join(this.#tempDir, "sync-"));
    let stage: "sync" | "upload" = "sync";
    try {
      const { connector: syncer, concurrency } = this.#upstream.syncer();
      // Read with the connector's variables, so a mistake fails before any request.
      const limit = parseRemovalLimit(
        this.#options.readEnv()[MAX_REMOVAL_VARIABLE],
        MAX_REMOVAL_VARIABLE,
      );
      const summary = await this.#scoped((signal) =>
        runLocalSync({
          connector: syncer,
          outFile: join(dir, `${syncId}.jsonl.gz`),
          concurrency,
          syncId,
          connectorId: platform.hostId,
          ctx: newRequestContext({ logger, signal }),
        }),
      );
      const digest = await this.#digestOf(summary.snapshot);
      const verdict = judgeRemoval(await this.#held.published(), digest, limit);
      if (verdict.held) {
        await this.#held.hold(summary.snapshot, digest);
        const detail = describeHeldSync(verdict, connector, nextSyncAt);
        logger.warn("sync held: the snapshot removes too much; nothing was uploaded", {
          users: verdict.users,
          grants: verdict.grants,
          limitPercent: verdict.limit,
          heldSnapshot: this.#held.snapshotPath,
        });
        await this.#report(state, { label: "error", detail, delivered: false });
        this.#updateHealth({
          lastSync: { syncId, outcome: "held", at: new Date().toISOString(), detail },
        });
        return { status: "held", syncId, detail };
      }
      stage = "upload";
      const upload = await this.#upload(syncId, summary.snapshot, logger);
      await this.#held.recordPublished(digest);
      await this.#report(state, { label: "connected", delivered: false });
      this.#updateHealth({
        lastSync: { syncId, outcome: "uploaded", at: new Date().toISOString() },
      });
      logger.info("sync uploaded", {
        counts: summary.counts,
        skipped: summary.skipped,
        requests: summary.requests,
        retries: summary.retries,
        rateLimitWaits: summary.rateLimitWaits,
        bytes: upload.bytes,
        sha256: upload.sha256,
        uploadAttempts: upload.attempts,
        durationMs: Date.now() - startedAt,
        guard: { basis: verdict.basis, users: verdict.users, grants: verdict.grants },
      });
      return { status: "uploaded", syncId, summary, upload };
    } catch (error) {
      if (this.stopping) {
        logger.warn("sync abandoned: the service is stopping; nothing was uploaded", { stage });
        this.#restoreLabel =
          before && before.label !== "syncing"
            ? { ...before, delivered: false }
            : {
                label: "error",
                detail:
                  "The connector host stopped before its first sync completed; nothing was uploaded. The next sync starts when the service runs again.",
                delivered: false,
              };
        return { status: "abandoned", syncId };
      }
      const detail =
        stage === "sync"
          ? describeSyncFailure(error, connector, nextSyncAt)
          : describeUploadFailure(error, nextSyncAt);
      logger.error("sync failed", { stage, reason: detail, error });
      await this.#report(state, { label: "error", detail, delivered: false });
      this.#updateHealth({
        lastSync: { syncId, outcome: "error", at: new Date().toISOString(), detail },
      });
      return { status: "error", syncId, detail };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  async #digestOf(snapshot: string): Promise<SnapshotDigest> {
    const result = await digestSnapshotFile(snapshot);
    if ("digest" in result) return result.digest;
    throw new Error(`the new snapshot cannot be read back: ${result.notSnapshot}`);
  }

  /**
   * Uploads the held snapshot `syncId` as it is (asked by `release --service`), makes it the one
   * the next sync is compared with, and sets the label `connected`. A request for a snapshot no
   * longer held (a later sync replaced it) is answered `superseded`. While the platform cannot be
   * reached the request stays and the loop tries again after its wait.
   */
  async #release(state: ServiceState, syncId: string): Promise<void> {
    const logger = this.#logger.child({ syncId, connectorId: this.#config.platform.hostId });
    const held = await this.#held.held();
    if (held?.syncId !== syncId) {
      const detail = held
        ? `sync ${held.syncId} is held now, not ${syncId}; release again to upload it`
        : `sync ${syncId} is no longer held: a later sync replaced it`;
      logger.warn("release request for a snapshot not held", { detail });
      await this.#held.answerRelease({ syncId, status: "superseded", detail });
      return;
    }
    this.#updateHealth({ phase: "releasing" });
    logger.info("releasing the held snapshot", {
      users: held.users.length,
      grants: held.grants.length,
    });
    let upload: UploadResult;
    try {
      upload = await this.#upload(syncId, this.#held.snapshotPath, logger);
    } catch (error) {
      if (this.stopping || isPlatformUnavailable(error)) throw error;
      const detail = describeUploadFailure(error, new Date(this.#nextSyncAt));
      logger.error("the held snapshot was not taken", { reason: detail, error });
      await this.#held.answerRelease({ syncId, status: "failed", detail });
      await this.#report(state, { label: "error", detail, delivered: false });
      return;
    }
    await this.#held.recordPublished(held);
    await this.#held.answerRelease({
      syncId,
      status: "uploaded",
      detail: `uploaded ${upload.bytes} bytes (sha256 ${upload.sha256})`,
    });
    await this.#report(state, { label: "connected", delivered: false });
    this.#updateHealth({ lastSync: { syncId, outcome: "uploaded", at: new Date().toISOString() } });
    logger.info("held snapshot released and uploaded", {
      bytes: upload.bytes,
      sha256: upload.sha256,
      uploadAttempts: upload.attempts,
    });
  }

  /**
   * Uploads a complete snapshot. While the platform is unavailable, tries again with backoff until
   * the next sync is due (a fresher snapshot replaces this one then); any other refusal is final.
   */
  async #upload(syncId: string, path: string, logger: JsonLogger): Promise<UploadResult> {
    const backoff = new Backoff(PLATFORM_BACKOFF);
    for (;;) {
      try {
        const result = await this.#scoped((signal) =>
          this.#platform.uploadSnapshot(syncId, path, { signal }),
        );
        this.#reachable();
        return result;
      } catch (error) {
        const waitMs = backoff.next();
        if (
          this.stopping ||
          !isPlatformUnavailable(error) ||
          Date.now() + waitMs >= this.#nextSyncAt
        ) {
          throw error;
        }
        logger.warn("snapshot upload failed; trying again after a wait", { error, waitMs });
        await sleep(waitMs, undefined, { signal: this.#stop.signal });
      }
    }
  }

  /**
   * Records the label to report and tries to deliver it. When `required`, a failure to deliver
   * is thrown (the caller waits for the platform); otherwise the label stays in the outbox and
   * the loop (or the stop) delivers it.
   */
  async #report(state: ServiceState, label: LabelReport, required = false): Promise<void> {
    await state.setLabel(label);
    try {
      await this.#scoped((signal) => this.#deliverLabel(state, signal));
    } catch (error) {
      if (required) throw error;
      if (this.stopping) return;
      this.#logger.warn("the label could not be reported yet; it will be", {
        label: label.label,
        error,
      });
    }
  }

  async #deliverReports(state: ServiceState, signal: AbortSignal): Promise<void> {
    await this.#deliverLabel(state, signal);
    for (const finish of [...state.finishes]) {
      try {
        await this.#platform.finishTask(finish.taskId, finish.outcome, { signal });
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
      await state.dropFinish(finish.taskId);
    }
  }

  async #deliverLabel(state: ServiceState, signal: AbortSignal): Promise<void> {
    const label = state.label;
    if (!label || label.delivered) return;
    try {
      await this.#platform.setStatus(label.label, label.detail, { signal });
      this.#logger.info("label reported", { label: label.label, detail: label.detail });
    } catch (error) {
      if (!isRefusal(error)) throw error;
      this.#logger.warn("the platform refused the label", { label: label.label, error });
    }
    await state.setLabel({ ...label, delivered: true });
  }

  /** After the loop: reports what a stop leaves to report, removes temporary files. */
  /** After the loop: reports what a stop leaves to report, removes temporary files; never throws. */
  async #shutdown(state: ServiceState): Promise<void> {
    clearInterval(this.#healthTimer);
    try {
      if (this.#restoreLabel) await state.setLabel(this.#restoreLabel);
      const pending = (state.label && !state.label.delivered ? 1 : 0) + state.finishes.length;
      if (pending > 0) {
        await this.#deliverReports(state, AbortSignal.timeout(SHUTDOWN_CALL_TIMEOUT_MS));
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
    this.#updateHealth({ status: "stopped", phase: "stopped" });
    await this.#health.write(this.#healthState);
    this.#logger.info("service stopped");
  }

  #updateHealth(patch: Partial<HealthState>): void {
    const next = { ...this.#healthState, ...patch };
    if (next.platform.reachable) next.platform = { reachable: true };
    if (next.status !== "stopping" && next.status !== "stopped") {
      const troubled =
        !next.platform.reachable ||
        next.problem !== undefined ||
        next.lastSync?.outcome === "error" ||
        next.lastSync?.outcome === "held";
      next.status = !this.#everConnected ? "starting" : troubled ? "degraded" : "ok";
    }
    this.#healthState = next;
    this.#writeHealth();
  }

  #writeHealth(): void {
    void this.#health.write(this.#healthState).then((written) => {
      if (written === this.#healthWritable) return;
      this.#healthWritable = written;
      if (!written)
        this.#logger.warn("the health file cannot be written", { path: this.#health.path });
    });
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

/** The platform did not answer, or answered that it cannot serve now: worth trying again. */
function isPlatformUnavailable(error: unknown): boolean {
  if (NetworkError.is(error)) return true;
  return PlatformStatusError.is(error) && isRetryablePlatformStatus(error.status);
}

/** A failure of the platform itself (as opposed to this host's, such as a full disk). */
function isPlatformError(error: unknown): boolean {
  return (
    isPlatformUnavailable(error) ||
    PlatformCredentialsError.is(error) ||
    PlatformStatusError.is(error) ||
    PlatformResponseError.is(error)
  );
}

/** The platform answered and refused for good (a 4xx other than 401, 403 and 429, a bad body). */
function isRefusal(error: unknown): boolean {
  if (PlatformResponseError.is(error)) return true;
  return PlatformStatusError.is(error) && !isRetryablePlatformStatus(error.status);
}

function unreachableProvisioner(): never {
  throw new Error("a malformed request reaches no provisioner");
}

function messageOf(error: unknown): string {
  return redact(error instanceof Error ? error.message : String(error));
}
