import * as z from "zod";
import { type Environment, resolveSecrets } from "../config";
import { type ConnectorName, connectorNamed } from "../connectors";
import { ConfigError } from "../errors";
import { MAX_REMOVAL_VARIABLE, parseRemovalLimit } from "../guard";
import { loadPlatformConnection, PLATFORM_SECRET_VARIABLES } from "../platform";

/** A connector instance id: it names a secret, a registry row and S3 keys. */
export const connectorIdSchema = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9._-]{0,62}$/i,
    "a connector id is 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit",
  );

/** The platform variables an instance's secret holds (its upload identity), besides the connector's. */
const PLATFORM_VARIABLES = [
  "CONNECTOR_PLATFORM_URL",
  "CONNECTOR_CLIENT_ID",
  "CONNECTOR_CLIENT_SECRET",
];

/**
 * The variables an instance's secret may hold: its connector's, the platform connection's and the
 * removal guard's limit; `secrets` those of them that are secret (never shown again once stored).
 */
export function instanceVariables(connector: ConnectorName): {
  variables: ReadonlySet<string>;
  secrets: ReadonlySet<string>;
} {
  const definition = connectorNamed(connector);
  return {
    variables: new Set([...definition.variables, ...PLATFORM_VARIABLES, MAX_REMOVAL_VARIABLE]),
    secrets: new Set([...definition.secrets, ...PLATFORM_SECRET_VARIABLES]),
  };
}

/**
 * The settings of an instance found in `env` (what `cloud put-instance` reads): the variables
 * of `instanceVariables`, each `<NAME>_FILE` of a secret resolved as `sync` resolves it, values
 * trimmed, blanks left out. Not validated (`validateInstanceSettings` does that).
 */
export function pickInstanceSettings(
  connector: ConnectorName,
  env: Environment,
): Record<string, string> {
  const { variables, secrets } = instanceVariables(connector);
  const resolved = resolveSecrets(env, [...secrets]);
  const settings: Record<string, string> = {};
  for (const name of variables) {
    const value = resolved[name]?.trim();
    if (value) settings[name] = value;
  }
  return settings;
}

/**
 * Validates an instance's settings with the connector's and the platform's schemas, and the
 * removal guard's limit: one ConfigError naming every variable at fault.
 */
export function validateInstanceSettings(connector: ConnectorName, env: Environment): void {
  const issues = [];
  for (const check of [
    () => connectorNamed(connector).sync(env),
    () => loadPlatformConnection(env),
    () => parseRemovalLimit(env[MAX_REMOVAL_VARIABLE], MAX_REMOVAL_VARIABLE),
  ]) {
    try {
      check();
    } catch (error) {
      if (!ConfigError.is(error)) throw error;
      issues.push(...error.issues);
    }
  }
  if (issues.length > 0) throw new ConfigError(issues);
}
