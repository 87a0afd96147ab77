import type { z } from "zod";
import { describeIssues } from "../errors";
import type { RequestSummary } from "../http/errors";
import { printable } from "../http/HttpClient";
import { parseRetryAfter } from "../http/retryPolicy";
import { PlatformResponseError, PlatformStatusError } from "./errors";
import type { PlatformAnswer } from "./sendWithRetry";

/** OAuth errors that mean the client id or secret is wrong (RFC 6749 section 5.2). */
const CREDENTIAL_ERRORS: ReadonlySet<string> = new Set([
  "invalid_client",
  "unauthorized_client",
  "invalid_grant",
]);

/** A JSON body, or undefined when empty; anything else is not an answer of the protocol. */
function jsonBody(answer: PlatformAnswer, summary: RequestSummary): unknown {
  if (answer.text === "") return undefined;
  try {
    return JSON.parse(answer.text);
  } catch {
    const type = answer.headers.get("content-type") ?? "no content-type";
    throw new PlatformResponseError(
      summary,
      `the platform answered ${answer.status} with a body that is not JSON (${type}, ${answer.text.length} characters)`,
    );
  }
}

/** Parses an answer with `schema`; a body that is not JSON or does not fit is a precise error. */
export function parseAnswer<Schema extends z.ZodType>(
  schema: Schema,
  answer: PlatformAnswer,
  summary: RequestSummary,
): z.output<Schema> {
  const result = schema.safeParse(jsonBody(answer, summary));
  if (result.success) return result.data;
  throw new PlatformResponseError(
    summary,
    `the platform's answer does not fit the protocol (${describeIssues(result.error.issues, "(body)")})`,
  );
}

/** The parsed error body when it is JSON, else its text; never thrown for a bad body. */
function errorBody(answer: PlatformAnswer): unknown {
  try {
    return answer.text === "" ? undefined : JSON.parse(answer.text);
  } catch {
    return answer.text;
  }
}

/** A short reading of an error body: OAuth `error` and `error_description`, or `message`. */
export function describeAnswer(answer: PlatformAnswer): string | undefined {
  const body = errorBody(answer);
  // Upstream text: redacted before it is cut, control characters escaped.
  if (typeof body === "string") return body ? printable(body) : undefined;
  if (typeof body !== "object" || body === null) return undefined;
  const fields = body as Record<string, unknown>;
  const parts = [fields.error, fields.error_description, fields.message].filter(
    (part): part is string => typeof part === "string" && part.length > 0,
  );
  return parts.length > 0 ? printable(parts.join(": ")) : undefined;
}

/** The token endpoint refused the client: 401, 403, or 400 with an OAuth client error. */
export function isCredentialsRejection(answer: PlatformAnswer): boolean {
  if (answer.status === 401 || answer.status === 403) return true;
  if (answer.status !== 400) return false;
  const body = errorBody(answer);
  const error =
    typeof body === "object" && body !== null ? (body as { error?: unknown }).error : undefined;
  return typeof error === "string" && CREDENTIAL_ERRORS.has(error);
}

/** The error for an answer the call does not expect, with the platform's reason. */
export function statusError(summary: RequestSummary, answer: PlatformAnswer): PlatformStatusError {
  const retryAfterMs = parseRetryAfter(answer.headers.get("retry-after"));
  const detail = describeAnswer(answer);
  return new PlatformStatusError({
    status: answer.status,
    request: summary,
    body: errorBody(answer),
    ...(detail === undefined ? {} : { detail }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}
