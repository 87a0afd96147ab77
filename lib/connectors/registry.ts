import { ActionError, type Provisioner } from "../actions";
import type { Environment } from "../config";
import { UsageError } from "../errors";
import type { UpstreamOptions } from "../http";
import type { SyncConnector } from "../sync";
import {
  BLACKLINE_SECRET_VARIABLES,
  BLACKLINE_VARIABLES,
  BlacklineConnector,
  loadBlacklineConfig,
} from "./blackline";
import { CONNECTOR_NAMES, type ConnectorName } from "./types";
import {
  loadValimailConfig,
  VALIMAIL_SECRET_VARIABLES,
  VALIMAIL_VARIABLES,
  ValimailApi,
  ValimailConnector,
  ValimailProvisioner,
} from "./valimail";

export interface LoadedConnector {
  connector: SyncConnector;
  /** Jobs run at once by the local runner. */
  concurrency: number;
  /**
   * The configured request rate (unset: learned; 0: no ceiling), which the cloud runtime shares
   * among its workers.
   */
  requestsPerSecond: number | undefined;
}

export function parseConnectorName(value: string): ConnectorName {
  const name = value.trim().toLowerCase();
  if ((CONNECTOR_NAMES as readonly string[]).includes(name)) return name as ConnectorName;
  throw new UsageError(`unknown connector "${value}"; use one of: ${CONNECTOR_NAMES.join(", ")}`);
}

/** Validates the connector's configuration from `env` and builds its syncer (no request is made). */
export function loadSyncConnector(
  name: ConnectorName,
  env: Environment,
  options: UpstreamOptions = {},
): LoadedConnector {
  switch (name) {
    case "blackline": {
      const config = loadBlacklineConfig(env);
      return {
        connector: new BlacklineConnector(config, options),
        concurrency: config.maxConcurrency,
        requestsPerSecond: config.requestsPerSecond,
      };
    }
    case "valimail": {
      const config = loadValimailConfig(env);
      return {
        connector: new ValimailConnector(config, options),
        concurrency: config.maxConcurrency,
        requestsPerSecond: config.requestsPerSecond,
      };
    }
  }
}

/** Builds the connector's provisioner; BlackLine is read-only and answers every write `unsupported`. */
export function loadProvisioner(
  name: ConnectorName,
  env: Environment,
  options: UpstreamOptions = {},
): Provisioner {
  switch (name) {
    case "blackline":
      throw new ActionError(
        "unsupported",
        "BlackLine is read-only: this connector syncs it and changes nothing",
      );
    case "valimail": {
      const config = loadValimailConfig(env);
      return new ValimailProvisioner(config, new ValimailApi(config, options));
    }
  }
}

/** The variables a connector reads, and which of them are secrets (each also `<NAME>_FILE`). */
export function connectorVariables(name: ConnectorName): {
  variables: readonly string[];
  secrets: readonly string[];
} {
  switch (name) {
    case "blackline":
      return { variables: BLACKLINE_VARIABLES, secrets: BLACKLINE_SECRET_VARIABLES };
    case "valimail":
      return { variables: VALIMAIL_VARIABLES, secrets: VALIMAIL_SECRET_VARIABLES };
  }
}
