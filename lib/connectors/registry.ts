import type { Environment } from "../config";
import { UsageError } from "../errors";
import { type ApiOptions, BlacklineConnector, loadBlacklineConfig } from "./blackline";
import { CONNECTOR_NAMES, type ConnectorName, type SyncConnector } from "./types";

export interface LoadedConnector {
  connector: SyncConnector;
  /** Jobs run at once by the local runner. */
  concurrency: number;
}

export function parseConnectorName(value: string): ConnectorName {
  const name = value.trim().toLowerCase();
  if ((CONNECTOR_NAMES as readonly string[]).includes(name)) return name as ConnectorName;
  throw new UsageError(`unknown connector "${value}"; use one of: ${CONNECTOR_NAMES.join(", ")}`);
}

/** Validates the connector's configuration from `env` and builds it (no request is made). */
export function loadSyncConnector(
  name: ConnectorName,
  env: Environment,
  options: ApiOptions = {},
): LoadedConnector {
  switch (name) {
    case "blackline": {
      const config = loadBlacklineConfig(env);
      return {
        connector: new BlacklineConnector(config, options),
        concurrency: config.maxConcurrency,
      };
    }
    case "valimail":
      throw new UsageError("the valimail connector is not available yet");
  }
}
