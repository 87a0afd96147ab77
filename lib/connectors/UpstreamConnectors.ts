import { createHash } from "node:crypto";
import type { Provisioner } from "../actions";
import { type Environment, resolveSecrets } from "../config";
import type { UpstreamOptions } from "../http";
import type { Connector, LoadedSyncer } from "./types";

/** Built from one version of the settings. */
interface Built {
  /** A digest of the connector's settings as resolved (secrets read from their files). */
  key: string;
  syncer?: LoadedSyncer;
  provisioner?: Provisioner;
}

/**
 * One connector's syncer and provisioner, built from the settings as they are now: `readEnv` is
 * called each time (the service reads its env file and every `*_FILE` again; the cloud gives the
 * instance's secret as last read), and the objects are rebuilt only when the connector's settings
 * changed. So a rotated secret takes effect at the next sync, while unchanged settings keep their
 * token caches and limiters: a token is fetched when due, not once a sync, and each replaced
 * token leaves the redaction registry when it expires (a fresh client per sync would leave every
 * one of its tokens there for the life of the process).
 */
export class UpstreamConnectors {
  readonly connector: Connector;
  readonly #readEnv: () => Environment;
  readonly #options: UpstreamOptions;
  #built: Built | undefined;

  constructor(connector: Connector, readEnv: () => Environment, options: UpstreamOptions = {}) {
    this.connector = connector;
    this.#readEnv = readEnv;
    this.#options = options;
  }

  /** Throws the configuration's error (naming the variable) when the settings no longer read. */
  syncer(): LoadedSyncer {
    const { built, env } = this.#current();
    built.syncer ??= this.connector.sync(env, this.#options);
    return built.syncer;
  }

  provisioner(): Provisioner {
    const { built, env } = this.#current();
    built.provisioner ??= this.connector.provisioner(env, this.#options);
    return built.provisioner;
  }

  #current(): { built: Built; env: Environment } {
    const env = this.#readEnv();
    const resolved = resolveSecrets(env, this.connector.secrets);
    const key = createHash("sha256")
      .update(JSON.stringify(this.connector.variables.map((name) => resolved[name] ?? null)))
      .digest("hex");
    if (this.#built?.key !== key) this.#built = { key };
    return { built: this.#built, env };
  }
}
