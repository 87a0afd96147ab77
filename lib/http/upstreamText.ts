/** What an upstream sent, read: its body, a short reading of an error body, text safe to quote. */

import { parseLargeJson } from "../json/largeJson";
import { redact } from "../redact";
import type { AnswerHeaders } from "./types";

/**
 * An answer's body from its bytes: parsed JSON when the answer says it is JSON and parses (a large
 * one in pieces, `parseLargeJson`), else the text; undefined when empty.
 */
export function readJsonAnswer(bytes: Buffer, response: { headers: AnswerHeaders }): unknown {
  return (
    (isJson(response) ? parseLargeJson(bytes) : undefined) ??
    parseBody(bytes.toString("utf8"), response)
  );
}

/** Parsed JSON when the answer says it is JSON and parses, else the text; undefined when empty. */
export function parseBody(text: string, response: { headers: AnswerHeaders }): unknown {
  if (text === "") return undefined;
  if (isJson(response)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

/** Whether an answer says it is JSON (`application/json`, `application/scim+json` and the like). */
export function isJson(response: { headers: AnswerHeaders }): boolean {
  return /json/i.test(response.headers.get("content-type") ?? "");
}

/**
 * A short human reading of an error body: OAuth (`error`, `error_description`), SCIM
 * (`detail`, `scimType`) or a `message` field; a short text body as is.
 */
export function describeErrorBody(body: unknown): string | undefined {
  if (typeof body === "string") return printable(body);
  if (typeof body !== "object" || body === null) return undefined;
  const fields = body as Record<string, unknown>;
  const parts = [
    fields.error,
    fields.error_description,
    fields.scimType,
    fields.detail,
    fields.message,
  ].filter((part): part is string => typeof part === "string" && part.length > 0);
  return parts.length > 0 ? printable(parts.join(": ")) : undefined;
}

const MAX_QUOTED_CHARS = 200;

/**
 * Upstream text made safe to quote in a message or a log line: control characters (terminal
 * escapes, line breaks that would forge log lines) shown as `\uXXXX`, and at most 200 characters.
 */
export function printable(upstreamText: string): string {
  // Redacted before it is cut: a secret echoed across the cut would otherwise leave its start.
  const text = redact(upstreamText);
  const short = text.length <= MAX_QUOTED_CHARS ? text : `${text.slice(0, MAX_QUOTED_CHARS)}...`;
  return short.replace(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
