import { createHash } from "node:crypto";
import type { Provisioner } from "../actions";
import { type Environment, resolveSecrets } from "../config";
import {
  connectorVariables,
  type LoadedConnector,
  loadProvisioner,
  loadSyncConnector,
} from "../connectors/registry";
import type { ConnectorName } from "../connectors/types";

/**
 * The upstream connector and provisioner, built from the settings as they are now: the settings
 * (the env file and every `*_FILE`) are read again each time, and the objects are rebuilt only
 * when they changed. So a rotated secret takes effect at the next sync, while unchanged settings
 * keep their token caches: a token is fetched when due, not once a sync, and each replaced token
 * leaves the redaction registry when it expires (a fresh client per sync would leave every one
 * of its tokens there for the life of the process).
 */
interface Built {
  /** A digest of the connector's settings as resolved (secrets read from their files). */
  key: string;
  syncer?: LoadedConnector;
  provisioner?: Provisioner;
}

export class UpstreamConnectors {
  readonly #name: ConnectorName;
  readonly #readEnv: () => Environment;
  #built: Built | undefined;

  constructor(name: ConnectorName, readEnv: () => Environment) {
    this.#name = name;
    this.#readEnv = readEnv;
  }

  /** Throws the configuration's error (naming the variable) when the settings no longer read. */
  syncer(): LoadedConnector {
    const { built, env } = this.#current();
    built.syncer ??= loadSyncConnector(this.#name, env);
    return built.syncer;
  }

  provisioner(): Provisioner {
    const { built, env } = this.#current();
    built.provisioner ??= loadProvisioner(this.#name, env);
    return built.provisioner;
  }

  #current(): { built: Built; env: Environment } {
    const env = this.#readEnv();
    const { variables, secrets } = connectorVariables(this.#name);
    const resolved = resolveSecrets(env, secrets);
    const key = createHash("sha256")
      .update(JSON.stringify(variables.map((name) => resolved[name] ?? null)))
      .digest("hex");
    if (this.#built?.key !== key) this.#built = { key };
    return { built: this.#built, env };
  }
}
