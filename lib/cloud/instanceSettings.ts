import * as z from "zod";
import { type Environment, resolveSecrets } from "../config";
import { type ConnectorName, connectorNamed } from "../connectors";
import { ConfigError } from "../errors";
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
 * The settings an instance's secret holds: the variables of its connector and the platform's
 * connection, read from `env` exactly as `sync` reads them (`<NAME>_FILE` resolved), validated by
 * the same schemas (the same mistake gets the same message, exit 2), and nothing else.
 */
export function collectInstanceSettings(
  connector: ConnectorName,
  env: Environment,
): Record<string, string> {
  const { variables, secrets } = connectorNamed(connector);
  const secretNames = [...secrets, ...PLATFORM_SECRET_VARIABLES];
  const resolved = resolveSecrets(env, secretNames);
  // Validated as stored: the values read from `<NAME>_FILE`, without the `_FILE` variables (the
  // schemas would find both set and refuse).
  const files = new Set(secretNames.map((name) => `${name}_FILE`));
  validateInstanceSettings(
    connector,
    Object.fromEntries(Object.entries(resolved).filter(([name]) => !files.has(name))),
  );
  const settings: Record<string, string> = {};
  for (const name of [...variables, ...PLATFORM_VARIABLES]) {
    const value = resolved[name]?.trim();
    if (value) settings[name] = value;
  }
  return settings;
}

/** Validates an instance's settings with the connector's and the platform's schemas. */
export function validateInstanceSettings(connector: ConnectorName, env: Environment): void {
  const issues = [];
  for (const check of [
    () => connectorNamed(connector).sync(env),
    () => loadPlatformConnection(env),
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
