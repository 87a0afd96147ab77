import { setTimeout as sleep } from "node:timers/promises";
import type { Environment } from "../config/environment";
import { messageOf } from "../errors";
import {
  loadPlatformConfig,
  PlatformClient,
  PlatformCredentialsError,
  type UploadResult,
} from "../platform";
import { WriteFailedError } from "../sync/errors";
import { Backoff } from "./Backoff";
import type { ServiceConfig } from "./config";
import { PLATFORM_BACKOFF, SERVICE_PLATFORM_RETRY } from "./constants";
import type { JsonLogger } from "./jsonLogger";
import { withLinkedSignal } from "./linkedSignal";
import { isPlatformError, isPlatformUnavailable } from "./platformErrors";
import type { ServiceHealth } from "./ServiceHealth";

/** Poll interval until `hello` says otherwise. */
const DEFAULT_POLL_MS = 5_000;

export interface PlatformLinkOptions {
  config: ServiceConfig;
  version: string;
  /** The variables as they are now: read again when the platform rejects the credentials. */
  readEnv: () => Environment;
  logger: JsonLogger;
  health: ServiceHealth;
  /** The service's stop: every call aborts with it. */
  stop: AbortSignal;
  /** Told of every snapshot the platform took (/metrics). */
  onUpload?: (result: UploadResult) => void;
}

/**
 * The service's side of the platform: the client (made again from the variables as they are now
 * when the platform rejects its credentials, so a rotated secret file needs no restart), `hello`
 * and the poll interval it answers, the backoff after a failure, and the upload of a snapshot,
 * tried again while the platform is away.
 */
export class PlatformLink {
  readonly #options: PlatformLinkOptions;
  readonly #backoff = new Backoff(PLATFORM_BACKOFF);
  #client: PlatformClient;
  #connected = false;
  #pollMs = DEFAULT_POLL_MS;

  constructor(options: PlatformLinkOptions) {
    this.#options = options;
    this.#client = this.#newClient(options.config.platform);
  }

  /** The client as it is now (made again after rejected credentials). */
  get client(): PlatformClient {
    return this.#client;
  }

  /** Whether `hello` was answered since the last failure. */
  get connected(): boolean {
    return this.#connected;
  }

  get pollMs(): number {
    return this.#pollMs;
  }

  /** Runs `work` on the client with a signal that aborts on the service's stop. */
  call<T>(work: (client: PlatformClient, signal: AbortSignal) => Promise<T>): Promise<T> {
    return withLinkedSignal(this.#options.stop, (signal) => work(this.#client, signal));
  }

  async hello(): Promise<void> {
    const { config, version, health, logger } = this.#options;
    health.update({ phase: "connecting" });
    const request = { connector: config.connector, version, capabilities: config.capabilities };
    const answer = await this.call((client, signal) => client.hello(request, { signal }));
    this.#pollMs = answer.pollIntervalSeconds * 1000;
    this.#connected = true;
    health.connected();
    this.reachable();
    logger.info("connected to the platform", {
      pollIntervalSeconds: answer.pollIntervalSeconds,
      capabilities: config.capabilities,
    });
  }

  /** The platform answered. */
  reachable(): void {
    this.#backoff.reset();
    this.#options.health.reachable();
  }

  /** After a failure: backs off (the platform's outage, rejected credentials, anything else). */
  async waitAfter(error: unknown): Promise<void> {
    const { logger, health, stop } = this.#options;
    // A file this host cannot write is no news of the platform: no new `hello` (whose answer
    // would reset the backoff), so a full disk is tried again less and less often.
    const ofHost = WriteFailedError.is(error);
    if (!ofHost) this.#connected = false;
    const waitMs = this.#backoff.next();
    const fields = { error, waitMs, failures: this.#backoff.failures };
    if (ofHost) {
      logger.error("a file of the service cannot be written; trying again after a wait", {
        ...fields,
        path: error.path,
      });
    } else if (PlatformCredentialsError.is(error)) {
      logger.error("the platform rejected the credentials; reading them again after a wait", {
        ...fields,
        fix: "check CONNECTOR_CLIENT_ID and CONNECTOR_CLIENT_SECRET (or its _FILE) against the connector's credentials in the platform",
      });
      this.#reloadCredentials();
    } else if (isPlatformUnavailable(error)) {
      logger.warn("the platform cannot be reached; trying again after a wait", fields);
    } else {
      logger.error("unexpected failure; trying again after a wait", fields);
    }
    health.waiting(messageOf(error), isPlatformError(error));
    await sleep(waitMs, undefined, { signal: stop }).catch(() => {});
  }

  /**
   * Uploads a complete snapshot. While the platform is unavailable, tries again with backoff
   * until `until` (when the next sync is due: a fresher snapshot replaces this one then); any
   * other refusal is final.
   */
  async upload(
    syncId: string,
    path: string,
    logger: JsonLogger,
    until: number,
  ): Promise<UploadResult> {
    const { stop } = this.#options;
    const backoff = new Backoff(PLATFORM_BACKOFF);
    for (;;) {
      try {
        const result = await this.call((client, signal) =>
          client.uploadSnapshot(syncId, path, { signal }),
        );
        this.reachable();
        this.#options.onUpload?.(result);
        return result;
      } catch (error) {
        const waitMs = backoff.next();
        if (stop.aborted || !isPlatformUnavailable(error) || Date.now() + waitMs >= until) {
          throw error;
        }
        logger.warn("snapshot upload failed; trying again after a wait", { error, waitMs });
        await sleep(waitMs, undefined, { signal: stop });
      }
    }
  }

  #reloadCredentials(): void {
    try {
      this.#client = this.#newClient(loadPlatformConfig(this.#options.readEnv()));
    } catch (error) {
      this.#options.logger.error("the platform variables cannot be read again", { error });
    }
  }

  #newClient(config: ServiceConfig["platform"]): PlatformClient {
    return new PlatformClient({
      baseUrl: config.platformUrl,
      clientId: config.clientId,
      clientSecret: config.clientSecret,
      hostId: config.hostId,
      retry: SERVICE_PLATFORM_RETRY,
      logger: this.#options.logger,
    });
  }
}
