import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { once } from "node:events";
import {
  type ClientRequest,
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from "node:http";
import type { AddressInfo } from "node:net";
import { vi } from "vitest";

/** One request as it arrived: the raw request target (no normalisation) and the Host header. */
export interface ReceivedRequest {
  method: string;
  /** The request target exactly as sent, e.g. `/v1/teams/a%2Fb/users?page=1`. */
  target: string;
  host: string | undefined;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Answer {
  status: number;
  /** JSON-encoded unless `raw` is given. */
  body?: unknown;
  raw?: string;
  contentType?: string;
}

export interface RecordingServer {
  url: string;
  /** Every request received, in order. */
  readonly received: ReceivedRequest[];
  /**
   * Every address the process asked while recording (any host): through `fetch`, and through
   * node:http, which upstream GETs use (seen on its `http.client.request.start` channel).
   */
  readonly fetched: string[];
  answer: (request: ReceivedRequest) => Answer;
  /** Forgets what was received and fetched. */
  reset(): void;
  close(): Promise<void>;
}

/**
 * A loopback HTTP server that answers with whatever the property generated and records each
 * request's raw target and Host; alongside, `fetch` and node:http requests are observed (sent
 * unchanged) so a request to any other host would be seen too, not only those that reach this server.
 */
export async function startRecordingServer(): Promise<RecordingServer> {
  const received: ReceivedRequest[] = [];
  const fetched: string[] = [];
  const realFetch = globalThis.fetch;
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
    fetched.push(input instanceof Request ? input.url : String(input));
    return realFetch(input, init);
  });
  const onHttpRequest = (message: unknown) => {
    const request = (message as { request: ClientRequest }).request;
    fetched.push(`${request.protocol}//${String(request.getHeader("host"))}${request.path}`);
  };
  subscribe("http.client.request.start", onHttpRequest);
  const state: RecordingServer = {
    url: "",
    received,
    fetched,
    answer: () => ({ status: 404, body: { message: "no answer set" } }),
    reset() {
      received.length = 0;
      fetched.length = 0;
    },
    async close() {
      spy.mockRestore();
      unsubscribe("http.client.request.start", onHttpRequest);
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
  const server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const request: ReceivedRequest = {
      method: req.method ?? "",
      target: req.url ?? "",
      host: req.headers.host,
      headers: req.headers,
      body: Buffer.concat(chunks).toString("utf8"),
    };
    received.push(request);
    let answer: Answer;
    try {
      answer = state.answer(request);
    } catch (error) {
      answer = { status: 500, body: { message: `test server: ${String(error)}` } };
    }
    const text = answer.raw ?? (answer.body === undefined ? "" : JSON.stringify(answer.body));
    res.writeHead(answer.status, {
      "content-type": answer.contentType ?? "application/json",
      "content-length": Buffer.byteLength(text),
    });
    res.end(text);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

/** The path of a raw request target, split into percent-decoded segments (the query dropped). */
export function pathSegments(target: string): string[] {
  const path = target.split("?")[0] ?? "";
  return path
    .split("/")
    .slice(1)
    .map((segment) => decodeURIComponent(segment));
}

/**
 * A raw path segment a URL parser would treat as `.` or `..` (RFC 3986 section 5.2.4 and the WHATWG
 * URL standard count `%2e` as a dot): such a segment changes which endpoint is asked.
 */
export function isDotSegment(rawSegment: string): boolean {
  return /^(?:\.|%2e){1,2}$/i.test(rawSegment);
}
