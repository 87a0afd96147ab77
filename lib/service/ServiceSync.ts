import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Environment } from "../config/environment";
import type { UpstreamConnectors } from "../connectors";
import { type GuardVerdict, MAX_REMOVAL_VARIABLE, parseRemovalLimit } from "../guard";
import { type HttpCounters, newCounters, newRequestContext } from "../http";
import type { UploadResult } from "../platform";
import { publishGuarded, publishHeld, type ReleaseOutcome } from "../publish";
import { runLocalSync, type SyncSummary } from "../sync";
import { WriteFailedError, writeFailure } from "../sync/errors";
import type { ServiceConfig } from "./config";
import {
  describeHeldSync,
  describeHostFailure,
  describeSyncFailure,
  describeUploadFailure,
} from "./describeFailure";
import { HeldSnapshot } from "./HeldSnapshot";
import type { JsonLogger } from "./jsonLogger";
import { withLinkedSignal } from "./linkedSignal";
import type { PlatformLink } from "./PlatformLink";
import { isPlatformUnavailable } from "./platformErrors";
import type { Reports } from "./Reports";
import type { ServiceHealth } from "./ServiceHealth";
import type { LabelReport, ServiceState } from "./ServiceState";
import { STATE_DIR_ELSEWHERE } from "./writeWhole";

/**
 * How one sync ended (an error with what failed), with what its requests did (`counters`: how
 * each ended, the rate learned), for /metrics and /status.
 */
export type SyncOutcome =
  | {
      status: "uploaded";
      syncId: string;
      summary: SyncSummary;
      upload: UploadResult;
      counters: HttpCounters;
    }
  | {
      status: "error";
      syncId: string;
      detail: string;
      stage: "sync" | "upload";
      error: unknown;
      counters: HttpCounters;
    }
  | {
      status: "held";
      syncId: string;
      detail: string;
      summary: SyncSummary;
      counters: HttpCounters;
    }
  | { status: "abandoned"; syncId: string };

export interface ServiceSyncParts {
  config: ServiceConfig;
  readEnv: () => Environment;
  logger: JsonLogger;
  stop: AbortSignal;
  /** Where each sync's temporary files go (a directory of its own below it). */
  tempDir: string;
  upstream: UpstreamConnectors;
  state: ServiceState;
  health: ServiceHealth;
  link: PlatformLink;
  reports: Reports;
}

/**
 * The service's syncs and their publish: each sync writes a gzip snapshot under the temporary
 * directory, then the guarded publish of lib/publish (the guard's files in the state directory,
 * the platform upload) uploads it or holds it; `release` uploads a held one when
 * `release --service` asks. Labels and the health file say how each ended.
 */
export class ServiceSync {
  readonly #parts: ServiceSyncParts;
  /** The removal guard's files: the last upload's digest, a held snapshot, its release. */
  readonly #held: HeldSnapshot;
  #nextSyncAt = 0;
  #restoreLabel: LabelReport | undefined;

  constructor(parts: ServiceSyncParts) {
    this.#parts = parts;
    this.#held = new HeldSnapshot(parts.config.stateDir);
  }

  /** When the next sync is due (ms since the epoch); 0 before the first. */
  get nextSyncAt(): number {
    return this.#nextSyncAt;
  }

  /** Set when a stop abandons a sync: the label to report instead of `syncing`. */
  get restoreLabel(): LabelReport | undefined {
    return this.#restoreLabel;
  }

  /** The release `release --service` asked for, if any. */
  releaseRequested(): Promise<{ syncId: string } | undefined> {
    return this.#held.releaseRequested();
  }

  /**
   * One sync: label `syncing` (which must reach the platform, or the sync waits for it), the
   * connector's jobs into a gzip snapshot under the temporary directory, the guarded publish
   * (the upload under the sync's id, then `connected`, or held); or `error` with a reason a person
   * can act on, and nothing uploaded. A stop abandons it: no upload, the label goes back to what
   * it was.
   */
  async sync(taskId: string | undefined): Promise<SyncOutcome> {
    const { config, state, health, reports, link } = this.#parts;
    const syncId = randomUUID();
    const logger = this.#parts.logger.child({ syncId, connectorId: config.platform.hostId });
    const before = state.label;
    try {
      await reports.label({ label: "syncing", delivered: false }, true);
    } catch (error) {
      // A state file this host cannot write: the platform is told why nothing syncs (the label
      // is kept in memory, delivered by the loop) and the loop waits it out.
      if (WriteFailedError.is(error)) {
        const label: LabelReport = {
          label: "error",
          detail: describeHostFailure(error),
          delivered: false,
        };
        await state.setLabel(label).catch(() => {});
        throw error;
      }
      // The sync waits for the platform; its label must not be reported later on its own.
      if (before) await state.setLabel(before);
      throw error;
    }
    const startedAt = Date.now();
    this.#nextSyncAt = startedAt + config.platform.syncIntervalMs;
    const nextSyncAt = new Date(this.#nextSyncAt);
    health.update({ phase: "syncing", nextSyncAt: nextSyncAt.toISOString() });
    logger.info("sync started", { trigger: taskId ? "task" : "schedule", taskId });
    let stage: "sync" | "upload" = "sync";
    let dir: string | undefined;
    const counters = newCounters();
    try {
      // In the try: a state directory too full for it fails this sync, whose label says why.
      const syncDir = await mkdtemp(join(this.#parts.tempDir, "sync-")).catch((error: unknown) => {
        throw writeFailure(error, {
          what: "a sync's temporary directory",
          path: join(this.#parts.tempDir, "sync-XXXXXX"),
          elsewhere: STATE_DIR_ELSEWHERE,
        });
      });
      dir = syncDir;
      const { connector: syncer, concurrency } = this.#parts.upstream.syncer();
      // Read with the connector's variables, so a mistake fails before any request.
      const limit = parseRemovalLimit(
        this.#parts.readEnv()[MAX_REMOVAL_VARIABLE],
        MAX_REMOVAL_VARIABLE,
      );
      const { summary, digest } = await withLinkedSignal(this.#parts.stop, (signal) =>
        runLocalSync({
          connector: syncer,
          outFile: join(syncDir, `${syncId}.jsonl.gz`),
          concurrency,
          syncId,
          connectorId: config.platform.hostId,
          ctx: newRequestContext({ logger, signal, counters }),
        }),
      );
      const outcome = await publishGuarded({
        snapshotFile: summary.snapshot,
        digest,
        syncId,
        limit,
        store: this.#held,
        publish: (file, id) => {
          stage = "upload";
          this.#held.letGo(digest);
          return link.upload(id, file, logger, this.#nextSyncAt);
        },
      });
      if (outcome.held) {
        return await this.#onHeld(syncId, outcome.verdict, logger, summary, counters);
      }
      const upload = outcome.published;
      await reports.label({ label: "connected", delivered: false });
      health.update({ lastSync: { syncId, outcome: "uploaded", at: new Date().toISOString() } });
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
        guard: {
          basis: outcome.verdict.basis,
          users: outcome.verdict.users,
          grants: outcome.verdict.grants,
        },
      });
      return { status: "uploaded", syncId, summary, upload, counters };
    } catch (error) {
      if (this.#parts.stop.aborted) {
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
      // A file this host could not write (the guard's digest after the upload, say) is no refusal of the platform's.
      const detail =
        stage === "sync" || WriteFailedError.is(error)
          ? describeSyncFailure(error, config.connector, nextSyncAt)
          : describeUploadFailure(error, nextSyncAt);
      logger.error("sync failed", { stage, reason: detail, error });
      await reports.label({ label: "error", detail, delivered: false });
      health.update({
        lastSync: { syncId, outcome: "error", at: new Date().toISOString(), detail },
      });
      return { status: "error", syncId, detail, stage, error, counters };
    } finally {
      if (dir) await rm(dir, { recursive: true, force: true });
      await this.#held.dropStaged().catch(() => {});
    }
  }

  async #onHeld(
    syncId: string,
    verdict: GuardVerdict,
    logger: JsonLogger,
    summary: SyncSummary,
    counters: HttpCounters,
  ): Promise<SyncOutcome> {
    const detail = describeHeldSync(
      verdict,
      this.#parts.config.connector,
      new Date(this.#nextSyncAt),
    );
    logger.warn("sync held: the snapshot removes too much; nothing was uploaded", {
      users: verdict.users,
      grants: verdict.grants,
      limitPercent: verdict.limit,
      heldSnapshot: this.#held.snapshotPath,
    });
    await this.#parts.reports.label({ label: "error", detail, delivered: false });
    this.#parts.health.update({
      lastSync: { syncId, outcome: "held", at: new Date().toISOString(), detail },
    });
    return { status: "held", syncId, detail, summary, counters };
  }

  /**
   * Uploads the held snapshot `syncId` as it is (asked by `release --service`), makes it the one
   * the next sync is compared with, and sets the label `connected`. A request for a snapshot no
   * longer held (a later sync replaced it) is answered `superseded`. While the platform cannot be
   * reached the request stays and the loop tries again after its wait.
   */
  async release(syncId: string): Promise<void> {
    const { config, health, reports, link } = this.#parts;
    const logger = this.#parts.logger.child({ syncId, connectorId: config.platform.hostId });
    let uploadError: unknown;
    let outcome: ReleaseOutcome<UploadResult>;
    try {
      outcome = await publishHeld({
        store: this.#held,
        syncId,
        publish: async (file, id) => {
          health.update({ phase: "releasing" });
          logger.info("releasing the held snapshot");
          return link.upload(id, file, logger, this.#nextSyncAt).catch((error: unknown) => {
            uploadError = error;
            throw error;
          });
        },
      });
    } catch (error) {
      // Only a refusal of the upload answers the request; anything else is waited out.
      if (error !== uploadError || this.#parts.stop.aborted || isPlatformUnavailable(error)) {
        throw error;
      }
      const detail = describeUploadFailure(error, new Date(this.#nextSyncAt));
      logger.error("the held snapshot was not taken", { reason: detail, error });
      await this.#held.answerRelease({ syncId, status: "failed", detail });
      await reports.label({ label: "error", detail, delivered: false });
      return;
    }
    if (outcome.status !== "released") {
      logger.warn("release request for a snapshot not held", { detail: outcome.detail });
      await this.#held.answerRelease({ syncId, status: "superseded", detail: outcome.detail });
      return;
    }
    const { published: upload, held } = outcome;
    await this.#held.answerRelease({
      syncId,
      status: "uploaded",
      detail: `uploaded ${upload.bytes} bytes (sha256 ${upload.sha256})`,
    });
    await reports.label({ label: "connected", delivered: false });
    health.update({ lastSync: { syncId, outcome: "uploaded", at: new Date().toISOString() } });
    logger.info("held snapshot released and uploaded", {
      users: held.users.length,
      grants: held.grants.length,
      bytes: upload.bytes,
      sha256: upload.sha256,
      uploadAttempts: upload.attempts,
    });
  }
}
