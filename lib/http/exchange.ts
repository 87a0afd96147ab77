/**
 * One HTTP exchange as `HttpClient` makes it, without its retries, limiter or counters: the
 * request's headers and body, the exchange itself within its deadline (node's client, or fetch for
 * a streamed body) and the answer's body as the request reads it.
 */
import type { AccessToken } from "./context";
import { readCapped, withDeadline } from "./deadline";
import { nodeRequest } from "./nodeRequest";
import type { AnswerHeaders, HttpRequest } from "./types";
import { isJson, readJsonAnswer } from "./upstreamText";

/** What is sent: the request's headers (with its token, if any) and its body, encoded. */
export interface Outgoing {
  headers: Record<string, string>;
  body: string | undefined;
}

export function requestHeadersAndBody(
  request: HttpRequest,
  access: AccessToken | undefined,
): Outgoing {
  const headers: Record<string, string> = { accept: "application/json", ...request.headers };
  let body: string | undefined;
  if (request.form) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(request.form).toString();
  } else if (request.json !== undefined) {
    headers["content-type"] = request.contentType ?? "application/json";
    body = JSON.stringify(request.json);
  }
  if (access) headers.authorization = `Bearer ${access.value}`;
  return { headers, body };
}

/** The answer's status, headers and body bytes (at most `maxBytes`), within `timeoutMs`. */
export function exchange(
  request: HttpRequest,
  url: URL,
  { headers, body }: Outgoing,
  timeoutMs: number,
  outerSignal: AbortSignal | undefined,
  cap: { maxBytes: number; tooLarge: () => Error },
): Promise<readonly [{ status: number; headers: AnswerHeaders }, Buffer]> {
  const { maxBytes, tooLarge } = cap;
  return withDeadline(timeoutMs, outerSignal, async (signal) => {
    if (!request.stream) {
      const sent = { method: request.method, headers, body };
      const answer = await nodeRequest(url, sent, signal, maxBytes, tooLarge);
      return [answer, answer.body] as const;
    }
    // A body streamed from a file (the platform's upload): fetch sends it.
    const stream = request.stream();
    try {
      const answer = await fetch(url, {
        method: request.method,
        headers,
        body: stream,
        signal,
        redirect: "error",
        duplex: "half",
      });
      return [answer, await readCapped(answer.body, signal, maxBytes, tooLarge)] as const;
    } finally {
      stream.destroy();
    }
  });
}

/**
 * An answer's body: a successful JSON answer as the request's `readJson` reads it, when it does;
 * otherwise the text (`rawBody`), or what `readJsonAnswer` reads.
 */
export function readAnswer(
  request: HttpRequest,
  response: { status: number; headers: AnswerHeaders },
  bytes: Buffer,
): unknown {
  if (request.readJson && response.status < 400 && isJson(response)) {
    const body = request.readJson(bytes);
    if (body !== undefined) return body;
  }
  if (request.rawBody) return bytes.toString("utf8") || undefined;
  return readJsonAnswer(bytes, response);
}
