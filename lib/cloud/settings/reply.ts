import type { ConfigIssue } from "../../errors";
import { redact } from "../../redact";

/** The settings reply (docs/settings.md) and its error codes. */

export const SETTINGS_ERROR_CODES = [
  "invalid_request",
  "not_found",
  "auth_failed",
  "run_in_progress",
  "upstream_error",
] as const;
export type SettingsErrorCode = (typeof SETTINGS_ERROR_CODES)[number];

/** One field at fault, as a Settings page shows it beside the field. */
export interface FieldError {
  /** The variable, e.g. `CONNECTOR_ACCOUNTING_SCOPE`, or `interval`. */
  field: string;
  /** What is wrong. */
  message: string;
  /** What to do about it. */
  fix: string;
}

export interface SettingsFailure {
  code: SettingsErrorCode;
  message: string;
  retryable: boolean;
  /** `auth_failed`: the setting the upstream's refusal points at. */
  field?: string;
}

export type SettingsReply<Result = unknown> =
  | { requestId: string; status: "succeeded"; result: Result }
  | { requestId: string; status: "invalid"; errors: FieldError[] }
  | { requestId: string; status: "failed"; error: SettingsFailure };

/** A failure reply; its message is redacted. */
export function failedSettings(
  requestId: string,
  code: SettingsErrorCode,
  message: string,
  options: { retryable?: boolean; field?: string } = {},
): SettingsReply<never> {
  const error: SettingsFailure = {
    code,
    message: redact(message),
    retryable: options.retryable ?? false,
  };
  if (options.field) error.field = options.field;
  return { requestId, status: "failed", error };
}

/** The `invalid` reply of a configuration error: one entry per field at fault, in its order. */
export function invalidSettings(
  requestId: string,
  issues: readonly ConfigIssue[],
): SettingsReply<never> {
  const byField = new Map<string, FieldError>();
  for (const issue of issues) {
    const error = fieldError(issue);
    const seen = byField.get(error.field);
    // One entry a field: a second problem of the same field joins the first.
    if (seen) {
      seen.message = `${seen.message}; ${error.message}`;
      seen.fix = `${seen.fix}; ${error.fix}`;
    } else byField.set(error.field, error);
  }
  return { requestId, status: "invalid", errors: [...byField.values()] };
}

/**
 * A configuration issue as a field error. Every validation message of this project reads "what
 * is wrong; how to fix it" (the schemas' messages, and "is not set; <where the value comes
 * from>" for a missing one): the part before the first "; " is the message, the rest the fix. A
 * value quoted at the start (`"Acme Corp" is not ...`) is skipped first, so that a "; " inside it
 * does not split. A message that only states the rule (`must be ...`) is its own fix.
 */
export function fieldError(issue: ConfigIssue): FieldError {
  const field = issue.variable;
  let text = redact(issue.message);
  // A credentials issue repeats its variable in front: `NAME: ...`.
  if (text.startsWith(`${field}: `)) text = text.slice(field.length + 2);
  const quoted = text.startsWith('"') ? text.indexOf('" ', 1) + 1 : 0;
  const at = text.indexOf("; ", quoted);
  if (at < 0) return { field, message: text, fix: text };
  return { field, message: text.slice(0, at), fix: text.slice(at + 2) };
}
