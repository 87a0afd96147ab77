/**
 * The project's error vocabulary. Every error a user can see carries the process exit code
 * of CONTRACTS.md section 1, so the command line maps errors to exit codes in one place.
 */

export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  credentialsRejected: 3,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** Base class: a failure of the upstream or of the runtime (exit 1). */
export class ConnectorError extends Error {
  override name = "ConnectorError";
  readonly exitCode: ExitCode = ExitCode.failure;
  /** Whether repeating the same operation later may succeed. */
  readonly retryable: boolean = false;

  static is(error: unknown): error is ConnectorError {
    return error instanceof ConnectorError;
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
  override readonly exitCode: ExitCode = ExitCode.usage;
}

/** The upstream rejected the credentials: 401, 403, `invalid_grant`, `invalid_client` (exit 3). */
export class CredentialsRejectedError extends ConnectorError {
  override name = "CredentialsRejectedError";
  override readonly exitCode: ExitCode = ExitCode.credentialsRejected;
}

/** The exit code for any thrown value: ours carry one, anything else is a runtime failure. */
export function exitCodeOf(error: unknown): ExitCode {
  return ConnectorError.is(error) ? error.exitCode : ExitCode.failure;
}
