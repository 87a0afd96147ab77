/**
 * The project's error vocabulary. Every error carries a narrow `code` (what went wrong, for
 * programs) and the process exit code of docs/command-line.md, so the command line maps errors
 * to exit codes in one place. Whether an error is worth retrying is decided by one rule,
 * `isRetryableError` in `http/retryPolicy.ts`, never by a flag on the error.
 */

import { redact } from "./redact";

export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  credentialsRejected: 3,
  /** The mass-deletion guard held the new snapshot (docs/removal-guard.md). */
  snapshotHeld: 4,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A class of errors, whatever its constructor's parameters. */
type ErrorClass<T> = abstract new (...args: never[]) => T;

/** Base class: a failure of the upstream or of the runtime (exit 1). */
export class ConnectorError extends Error {
  override name = "ConnectorError";
  readonly code: string = "connector_error";
  readonly exitCode: ExitCode = ExitCode.failure;

  /**
   * Whether `error` is an instance of the class this is called on, typed as one
   * (`ConfigError.is(error)`): every subclass inherits it, so none repeats it.
   */
  static is<T extends ConnectorError>(this: ErrorClass<T>, error: unknown): error is T {
    // biome-ignore lint/complexity/noThisInStatic: the class it is called on is the point
    return error instanceof this;
  }
}

export interface ConfigIssue {
  /** The environment variable (or option) at fault, e.g. `CONNECTOR_ACCOUNTING_SCOPE`. */
  variable: string;
  /** What is wrong and how to fix it. */
  message: string;
}

/** Bad configuration or usage: names every variable at fault and how to fix it (exit 2). */
export class ConfigError extends ConnectorError {
  override name = "ConfigError";
  override readonly code: string = "config_invalid";
  override readonly exitCode: ExitCode = ExitCode.usage;
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[]) {
    super(
      issues.length === 1
        ? `${issues[0]?.variable}: ${issues[0]?.message}`
        : `${issues.length} configuration problems:\n${issues.map((i) => `  - ${i.variable}: ${i.message}`).join("\n")}`,
    );
    this.issues = issues;
  }
}

/** Bad command-line usage (exit 2). */
export class UsageError extends ConnectorError {
  override name = "UsageError";
  override readonly code: string = "usage";
  override readonly exitCode: ExitCode = ExitCode.usage;
}

/** The upstream rejected the credentials: 401, 403, `invalid_grant`, `invalid_client` (exit 3). */
export class CredentialsRejectedError extends ConnectorError {
  override name = "CredentialsRejectedError";
  override readonly code: string = "credentials_rejected";
  override readonly exitCode: ExitCode = ExitCode.credentialsRejected;
  /** The setting to look at first (its variable name), when the answer points at one. */
  readonly field: string | undefined;

  constructor(message: string, options: ErrorOptions & { field?: string } = {}) {
    super(message, options);
    this.field = options.field;
  }
}

/** The exit code for any thrown value: ours carry one, anything else is a runtime failure. */
export function exitCodeOf(error: unknown): ExitCode {
  return ConnectorError.is(error) ? error.exitCode : ExitCode.failure;
}

/** A thrown value's message, redacted: for a log field, a reply, a label or another message. */
export function messageOf(error: unknown): string {
  return redact(error instanceof Error ? error.message : String(error));
}

/**
 * Zod's issues as one line, `path: problem; ...` (at most `limit`), for messages about input from
 * outside. `whole` names the input itself when an issue has no path.
 */
export function describeIssues(
  issues: readonly { path: readonly PropertyKey[]; message: string }[],
  whole: string,
  limit = 5,
): string {
  return issues
    .slice(0, limit)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : whole}: ${issue.message}`)
    .join("; ");
}
