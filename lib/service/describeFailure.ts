import { type ConnectorName, connectorNamed } from "../connectors";
import { ConfigError, CredentialsRejectedError, messageOf } from "../errors";
import { describeVerdict, type GuardVerdict, MAX_REMOVAL_VARIABLE } from "../guard";
import { HttpStatusError, NetworkError, RateLimitedError } from "../http";
import { redact } from "../redact";
import { WriteFailedError } from "../sync/errors";

/** A label's detail is read in the platform's interface: a few sentences at most. */
const MAX_DETAIL_LENGTH = 600;

/**
 * The `error` label's detail for a sync that failed: what went wrong, what a person can do
 * about it, and when the service tries again. Redacted, and short enough to read.
 */
export function describeSyncFailure(
  error: unknown,
  connector: ConnectorName,
  nextSyncAt: Date,
): string {
  // A file this host could not write: the message names it, what became of the snapshot and the fix.
  if (WriteFailedError.is(error)) return finish(messageOf(error).replace(/\.$/, ""), nextSyncAt);
  return finish(`${reasonOf(error, connector)} Nothing was uploaded`, nextSyncAt);
}

/** The detail for a file of this host the service cannot write before a sync (its state file). */
export function describeHostFailure(error: WriteFailedError): string {
  return clip(
    redact(
      `${error.message}. No sync runs until it can be written; the service tries again after a wait.`,
    ),
  );
}

/** The detail for a complete snapshot the platform did not take. */
export function describeUploadFailure(error: unknown, nextSyncAt: Date): string {
  const message = messageOf(error);
  return finish(
    `The sync completed but the platform did not take its snapshot (${message}); check this host's access to CONNECTOR_PLATFORM_URL`,
    nextSyncAt,
  );
}

/** The detail for a complete snapshot the mass-deletion guard held: why, and how to release it. */
export function describeHeldSync(
  verdict: GuardVerdict,
  connector: ConnectorName,
  nextSyncAt: Date,
): string {
  const { display } = connectorNamed(connector);
  return finish(
    `The new snapshot was held, not uploaded: ${describeVerdict(verdict)} (${MAX_REMOVAL_VARIABLE}). If ${display} really lost them, publish it as it is: run \`${RELEASE_SERVICE_COMMAND}\` on the connector host (in the container: docker exec <container> node /app/bin/access-connectors.js release --service). If not, fix ${display}: a later sync within the limit replaces the held snapshot`,
    nextSyncAt,
  );
}

/** What a customer's administrator runs to upload the snapshot the service holds. */
export const RELEASE_SERVICE_COMMAND = "access-connectors release --service";

function reasonOf(error: unknown, connector: ConnectorName): string {
  const { display, variablePrefix } = connectorNamed(connector);
  const message = messageOf(error);
  if (ConfigError.is(error)) {
    return `The configuration is not valid: ${message}. Fix it; it is read again before each sync.`;
  }
  if (CredentialsRejectedError.is(error)) {
    return `${sentence(`${display} rejected the credentials: ${message}`)} Correct them: they are read again before each sync, so an updated *_FILE needs no restart.`;
  }
  if (NetworkError.is(error)) {
    return sentence(
      `${display} could not be reached: ${message}. Check this host's network access to ${display} and ${variablePrefix}_BASE_URL if it is set`,
    );
  }
  if (RateLimitedError.is(error) || (HttpStatusError.is(error) && error.status === 429)) {
    return sentence(
      `${display} kept asking to slow down (429): ${message}. Lower ${variablePrefix}_REQUESTS_PER_SECOND or ${variablePrefix}_MAX_CONCURRENCY`,
    );
  }
  if (HttpStatusError.is(error) && error.status >= 500) {
    return sentence(`${display} failed (${error.status}) after retries: ${message}`);
  }
  return sentence(`The sync failed: ${message}`);
}

function finish(text: string, nextSyncAt: Date): string {
  return clip(redact(`${text}; the next sync starts at ${nextSyncAt.toISOString()}.`));
}

function clip(detail: string): string {
  return detail.length <= MAX_DETAIL_LENGTH
    ? detail
    : `${detail.slice(0, MAX_DETAIL_LENGTH - 3)}...`;
}

function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}
