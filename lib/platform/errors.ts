/**
 * Errors of the platform client. A call that got no answer fails with the HTTP layer's
 * `NetworkError`, and an aborted call with its `AbortedError`, so that `isRetryableError` and the
 * command line treat platform calls like any other; what is particular to the platform is here.
 */
import { ConnectorError, CredentialsRejectedError, UsageError } from "../errors";
import { HttpStatusError, type RequestSummary } from "../http";
import { redact } from "../redact";

/** The platform refused CONNECTOR_CLIENT_ID / CONNECTOR_CLIENT_SECRET, or a fresh token (exit 3). */
export class PlatformCredentialsError extends CredentialsRejectedError {
  override name = "PlatformCredentialsError";
  override readonly code: string = "platform_credentials_rejected";
  readonly request: RequestSummary;
  readonly status: number;

  constructor(request: RequestSummary, status: number, detail: string | undefined) {
    super(
      redact(
        `the platform rejected the credentials CONNECTOR_CLIENT_ID/CONNECTOR_CLIENT_SECRET (${request.method} ${request.path} answered ${status}${detail ? `: ${detail}` : ""}); check both values against the connector's credentials in the platform`,
      ),
      { field: "CONNECTOR_CLIENT_SECRET" },
    );
    this.request = request;
    this.status = status;
  }
}

/** The platform answered with an error status the call does not expect, after any retries. */
export class PlatformStatusError extends HttpStatusError {
  override name = "PlatformStatusError";
  override readonly code: string = "platform_status";
}

/** The platform answered with a body that is not JSON or does not fit the protocol. */
export class PlatformResponseError extends ConnectorError {
  override name = "PlatformResponseError";
  override readonly code: string = "platform_unexpected_response";
  readonly request: RequestSummary;

  constructor(request: RequestSummary, problem: string) {
    super(redact(`${request.method} ${request.path}: ${problem}`));
    this.request = request;
  }
}

/** A sync interval that does not read (CONNECTOR_SYNC_INTERVAL, `--interval`): exit 2. */
export class IntervalError extends UsageError {
  override name = "IntervalError";
  override readonly code: string = "invalid_interval";
}

/** A snapshot file that cannot be read for upload (missing, unreadable, not a file). */
export class SnapshotFileError extends ConnectorError {
  override name = "SnapshotFileError";
  override readonly code: string = "snapshot_unreadable";
}
