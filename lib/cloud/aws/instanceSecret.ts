import { clearCaches } from "@aws-lambda-powertools/parameters";
import { getSecret } from "@aws-lambda-powertools/parameters/secrets";
import {
  CreateSecretCommand,
  DeleteSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  ResourceExistsException,
  ResourceNotFoundException,
} from "@aws-sdk/client-secrets-manager";
import * as z from "zod";
import type { Environment } from "../../config";
import { type ConnectorName, connectorNamed } from "../../connectors";
import { ConfigError } from "../../errors";
import { parseJsonOrUndefined } from "../../parseJson";
import { PLATFORM_SECRET_VARIABLES } from "../../platform";
import { registerSecret } from "../../redact";
import { awsClients } from "./clients";

/**
 * An instance's settings in Secrets Manager: one secret a connector instance, a JSON object of
 * variable names to values (what `collectInstanceSettings` gathered).
 */
export function secretName(prefix: string, connectorId: string): string {
  return `${prefix}${connectorId}`;
}

/**
 * Creates the instance's secret, or stores a new version of it. This process's cached reads
 * (`readInstanceSettings`) are dropped, so that it reads the new version next.
 */
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
        Description: "access-connectors instance settings (docs/configuration.md)",
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceExistsException)) throw error;
    await secrets.send(new PutSecretValueCommand({ SecretId: name, SecretString }));
  }
  clearCaches();
}

/**
 * Deletes the instance's secret at once (no recovery window); one that is not there is no error
 * (Secrets Manager answers a forced delete of a missing secret as done).
 */
export async function deleteInstanceSecret(name: string): Promise<void> {
  try {
    await awsClients().secrets.send(
      new DeleteSecretCommand({ SecretId: name, ForceDeleteWithoutRecovery: true }),
    );
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  } finally {
    clearCaches();
  }
}

/**
 * The instance's settings as stored now (no cache: what a save merges with and `get` shows), or
 * undefined when it has no secret.
 */
export async function readStoredSettings(
  name: string,
): Promise<Record<string, string> | undefined> {
  let text: string | undefined;
  try {
    ({ SecretString: text } = await awsClients().secrets.send(
      new GetSecretValueCommand({ SecretId: name }),
    ));
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return undefined;
    throw error;
  }
  // A secret written by hand that is not a JSON object of strings holds nothing a save can keep.
  const parsed = secretSettings.safeParse(parseJsonOrUndefined(text));
  return parsed.success ? parsed.data : {};
}

const secretSettings = z.record(z.string(), z.string());

/** How long a warm function trusts a secret it read; a rotated secret is seen within this time. */
const SECRET_MAX_AGE_SECONDS = 300;

/** Per secret, the `settingsSavedAt` of the registry row it was last fetched for. */
const fetchedFor = new Map<string, string | undefined>();

/**
 * Reads an instance's settings through Powertools Parameters (cached for five minutes per warm
 * function, but fetched again once the row says they were saved since: a save that fixes a
 * setting is used by the next run, not five minutes later). Every value of the platform and the
 * connector's secret variables is registered for redaction before anything can print it.
 */
export async function readInstanceSettings(
  name: string,
  connector: ConnectorName,
  savedAt?: string,
): Promise<Environment> {
  const forceFetch = fetchedFor.has(name) && fetchedFor.get(name) !== savedAt;
  const raw = await getSecret(name, {
    transform: "json",
    maxAge: SECRET_MAX_AGE_SECONDS,
    forceFetch,
  });
  fetchedFor.set(name, savedAt);
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
