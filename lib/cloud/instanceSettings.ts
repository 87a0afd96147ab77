import { getSecret } from "@aws-lambda-powertools/parameters/secrets";
import {
  CreateSecretCommand,
  DeleteSecretCommand,
  PutSecretValueCommand,
  ResourceExistsException,
} from "@aws-sdk/client-secrets-manager";
import { z } from "zod";
import { type Environment, resolveSecrets } from "../config";
import { type ConnectorName, connectorNamed } from "../connectors";
import { ConfigError } from "../errors";
import { loadPlatformConnection, PLATFORM_SECRET_VARIABLES } from "../platform";
import { registerSecret } from "../redact";
import { awsClients } from "./clients";

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

export function secretName(prefix: string, connectorId: string): string {
  return `${prefix}${connectorId}`;
}

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

/** Creates the instance's secret, or stores a new version of it. */
export async function writeInstanceSecret(
  name: string,
  settings: Record<string, string>,
): Promise<void> {
  const SecretString = JSON.stringify(settings);
  const { secrets } = awsClients();
  try {
    await secrets.send(
      new CreateSecretCommand({
        Name: name,
        SecretString,
        Description: "access-connectors instance settings (CONTRACTS.md section 2)",
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceExistsException)) throw error;
    await secrets.send(new PutSecretValueCommand({ SecretId: name, SecretString }));
  }
}

export async function deleteInstanceSecret(name: string): Promise<void> {
  await awsClients().secrets.send(
    new DeleteSecretCommand({ SecretId: name, ForceDeleteWithoutRecovery: true }),
  );
}

const secretSettings = z.record(z.string(), z.string());

/** How long a warm function trusts a secret it read; a rotated secret is seen within this time. */
const SECRET_MAX_AGE_SECONDS = 300;

/**
 * Reads an instance's settings through Powertools Parameters (cached for five minutes per warm
 * function). Every value of the platform and the connector's secret variables is registered for
 * redaction before anything can print it.
 */
export async function readInstanceSettings(
  name: string,
  connector: ConnectorName,
): Promise<Environment> {
  const raw = await getSecret(name, { transform: "json", maxAge: SECRET_MAX_AGE_SECONDS });
  const parsed = secretSettings.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError([
      {
        variable: name,
        message:
          "the secret is not a JSON object of variable names to strings; write it again with `access-connectors cloud put-instance`",
      },
    ]);
  }
  for (const variable of [...connectorNamed(connector).secrets, ...PLATFORM_SECRET_VARIABLES]) {
    registerSecret(parsed.data[variable]);
  }
  return parsed.data;
}
