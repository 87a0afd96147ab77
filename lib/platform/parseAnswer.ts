import type * as z from "zod";
import { describeIssues } from "../errors";
import {
  describeErrorBody,
  type HttpResponse,
  HttpStatusError,
  type RequestSummary,
} from "../http";
import { PlatformCredentialsError, PlatformResponseError, PlatformStatusError } from "./errors";

/** OAuth errors that mean the client id or secret is wrong (RFC 6749 section 5.2). */
const CREDENTIAL_ERRORS: ReadonlySet<string> = new Set([
  "invalid_client",
  "unauthorized_client",
  "invalid_grant",
]);

/** The text of a body the HTTP layer handed over unparsed (`rawBody`); "" when empty. */
function textOf(body: unknown): string {
  return typeof body === "string" ? body : "";
}

/** A JSON body, or undefined when empty; anything else is not an answer of the protocol. */
function jsonBody(answer: HttpResponse, summary: RequestSummary): unknown {
  const text = textOf(answer.body);
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    const type = answer.headers.get("content-type") ?? "no content-type";
    throw new PlatformResponseError(
      summary,
      `the platform answered ${answer.status} with a body that is not JSON (${type}, ${text.length} characters)`,
    );
  }
}

/** Parses an answer with `schema`; a body that is not JSON or does not fit is a precise error. */
export function parseAnswer<Schema extends z.ZodType>(
  schema: Schema,
  answer: HttpResponse,
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
function errorBody(text: string): unknown {
  try {
    return text === "" ? undefined : JSON.parse(text);
  } catch {
    return text;
  }
}

/** The token endpoint refused the client: 401, 403, or 400 with an OAuth client error. */
function isClientRejection(status: number, body: unknown): boolean {
  if (status === 401 || status === 403) return true;
  if (status !== 400) return false;
  const error =
    typeof body === "object" && body !== null ? (body as { error?: unknown }).error : undefined;
  return typeof error === "string" && CREDENTIAL_ERRORS.has(error);
}

/**
 * The platform's error for a status the HTTP layer gave up on, with the platform's reason: the
 * credentials refused (401 again after a fresh token, or 403; at the token endpoint also 400 with
 * an OAuth client error), or `PlatformStatusError`. Any other error is returned as it is.
 */
export function platformError(error: unknown, tokenRequest: boolean): unknown {
  // A platform error already (the token's, met by a call that needed one) goes on as it is.
  if (!(error instanceof HttpStatusError) || error instanceof PlatformStatusError) return error;
  const { status, request, retryAfterMs } = error;
  const body = errorBody(textOf(error.body));
  const detail = describeErrorBody(body);
  const refused = tokenRequest ? isClientRejection(status, body) : status === 401 || status === 403;
  if (refused) return new PlatformCredentialsError(request, status, detail);
  return new PlatformStatusError({
    status,
    request,
    body,
    ...(detail === undefined ? {} : { detail }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}
