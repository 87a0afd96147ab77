/**
 * Requests over `node:http` and `node:https` with keep-alive agents, the way `HttpClient` sends
 * them; only a body streamed from a file (the platform's upload) goes through `fetch`. A sync is
 * thousands of GETs of large pages, and fetch's web streams and `Request`/`Response` objects cost
 * about 0.5 ms of CPU an answer (4,000 pages of 1 to 250 KB at 16 in flight: 3.7-4.2 s of CPU
 * through fetch, 2.1-2.3 s this way). A body sent as a string (a token request's form, SCIM's
 * JSON) goes this way too, and answers carry a plain map of their headers (`AnswerHeaders`), not
 * undici's `Headers`: a command's first `fetch` took 75 to 105 ms here and the first `Headers`
 * 41 ms (each loads undici), before a BlackLine sync's first page; now a sync loads none of it.
 *
 * What fetch did for these requests is kept: the same request headers when the caller sets none
 * (`accept`, `accept-encoding`, `accept-language`, `user-agent`; `content-length` for a body),
 * answers decoded as fetch decodes them (gzip, deflate, br; an unknown coding is left as sent), a
 * redirect answered as a failure ("unexpected redirect"; no client here follows one), a failure
 * carrying the socket's error as its `cause` (the reason `noAnswerReason` names), and a connection
 * dropped, not reused, when an answer is not read whole. `signal` ends the request at any point,
 * headers or body (the deadline of `withDeadline`): the socket is destroyed and the promise
 * rejects with the signal's reason. The body is counted after decoding and given up past
 * `maxBytes` (`tooLarge()`), so a compression bomb costs at most `maxBytes` of memory.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { Transform } from "node:stream";
import {
  constants,
  createBrotliDecompress,
  createGunzip,
  createInflate,
  createInflateRaw,
} from "node:zlib";
import type { AnswerHeaders } from "./types";

/** What is sent: a method, headers, and a body as a string, if any. */
export interface NodeRequest {
  method: string;
  headers: Record<string, string>;
  body?: string | undefined;
}

export interface NodeAnswer {
  status: number;
  headers: AnswerHeaders;
  /** The body, decoded. */
  body: Buffer;
}

// An idle connection is closed after 4 s, as fetch's (undici's keepAliveTimeout), or a second
// before the server's `Keep-Alive: timeout` hint when that is sooner (Node's agent reads it), so
// a request is not sent on a connection the server is closing. The agent's `timeout` acts only on
// idle connections: a request in flight is bounded by the deadline alone.
const IDLE_MS = 4_000;
const agents = {
  "http:": new HttpAgent({ keepAlive: true, timeout: IDLE_MS }),
  "https:": new HttpsAgent({ keepAlive: true, timeout: IDLE_MS }),
};

/** Methods sent with `content-length: 0` when they have no body, as fetch sends them. */
const ZERO_LENGTH = new Set(["POST", "PUT"]);

/** Statuses fetch follows as redirects (and fails with `redirect: "error"`). */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** A request that got no (whole) answer; the socket's or decoder's error is its `cause`. */
function noAnswer(cause: unknown): Error {
  return new Error("no answer", { cause });
}

export function nodeRequest(
  url: URL,
  request: NodeRequest,
  signal: AbortSignal,
  maxBytes: number,
  tooLarge: () => Error,
): Promise<NodeAnswer> {
  signal.throwIfAborted();
  const secure = url.protocol === "https:";
  if (!secure && url.protocol !== "http:") {
    return Promise.reject(noAnswer(new Error(`unsupported protocol ${url.protocol}`)));
  }
  const sent = withFetchDefaults(request, secure);
  return new Promise<NodeAnswer>((resolve, reject) => {
    let settled = false;
    let response: IncomingMessage | undefined;
    let decoders: Transform[] = [];
    const finish = (error: unknown, answer?: NodeAnswer) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      if (answer) {
        resolve(answer);
        return;
      }
      // Not read whole: the connection goes, rather than back to the pool mid-answer.
      for (const decoder of decoders) decoder.destroy();
      response?.destroy();
      req.destroy();
      reject(error);
    };
    const onAbort = () => finish(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });

    const req = (secure ? httpsRequest : httpRequest)(url, {
      method: request.method,
      headers: sent,
      agent: agents[secure ? "https:" : "http:"],
    });
    req.on("error", (error) => finish(noAnswer(error)));
    req.on("response", (res) => {
      response = res;
      const status = res.statusCode ?? 0;
      if (REDIRECTS.has(status)) {
        finish(noAnswer(new Error("unexpected redirect")));
        return;
      }
      const answerHeaders = headersOf(res.rawHeaders);
      try {
        decoders = decodersFor(res.headers["content-encoding"], status);
      } catch (error) {
        finish(noAnswer(error));
        return;
      }
      let source: NodeJS.ReadableStream = res;
      res.on("error", (error) => finish(noAnswer(error)));
      for (const decoder of decoders) {
        decoder.on("error", (error) => finish(noAnswer(error)));
        source = source.pipe(decoder);
      }
      const chunks: Buffer[] = [];
      let total = 0;
      source.on("data", (chunk: Buffer) => {
        total += chunk.length;
        if (total > maxBytes) {
          finish(tooLarge());
          return;
        }
        chunks.push(chunk);
      });
      source.on("end", () => {
        finish(undefined, {
          status,
          headers: answerHeaders,
          body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total),
        });
      });
    });
    req.end(request.body);
  });
}

/** The headers fetch adds when the caller sets none of them. */
function withFetchDefaults(request: NodeRequest, secure: boolean) {
  const sent: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) sent[name.toLowerCase()] = value;
  if (request.body !== undefined || ZERO_LENGTH.has(request.method)) {
    sent["content-length"] = String(Buffer.byteLength(request.body ?? ""));
  }
  sent.accept ??= "*/*";
  sent["accept-encoding"] ??= secure ? "br, gzip, deflate" : "gzip, deflate";
  sent["accept-language"] ??= "*";
  sent["user-agent"] ??= "node";
  return sent;
}

/** The answer's headers by lower-case name, repeats joined by ", " as `Headers` joins them. */
function headersOf(raw: string[]): AnswerHeaders {
  const byName = new Map<string, string>();
  for (let at = 0; at + 1 < raw.length; at += 2) {
    const name = (raw[at] as string).toLowerCase();
    const value = raw[at + 1] as string;
    const earlier = byName.get(name);
    byName.set(name, earlier === undefined ? value : `${earlier}, ${value}`);
  }
  return { get: (name) => byName.get(name.toLowerCase()) ?? null };
}

/** Statuses whose answers have no body, so no decoding. */
const NO_BODY = new Set([101, 204, 205, 304]);
/** More codings than this is refused, as fetch refuses it (a decoder chain as a resource attack). */
const MAX_CODINGS = 5;
const ZLIB_FLUSH = { flush: constants.Z_SYNC_FLUSH, finishFlush: constants.Z_SYNC_FLUSH };

/**
 * The decoders for `Content-Encoding`, last coding first, as fetch has them: an unknown coding
 * anywhere means none at all (the body as sent). Zlib flushes what it has, as fetch (and cURL)
 * let it, for servers whose streams end slightly wrong.
 */
function decodersFor(encoding: string | undefined, status: number): Transform[] {
  if (!encoding || NO_BODY.has(status)) return [];
  const codings = encoding.toLowerCase().split(",");
  if (codings.length > MAX_CODINGS) {
    throw new Error(
      `too many content-encodings in response: ${codings.length}, maximum allowed is ${MAX_CODINGS}`,
    );
  }
  const decoders: Transform[] = [];
  for (const coding of codings.reverse().map((c) => c.trim())) {
    if (coding === "gzip" || coding === "x-gzip") decoders.push(createGunzip(ZLIB_FLUSH));
    else if (coding === "deflate") decoders.push(inflateEither());
    else if (coding === "br") {
      decoders.push(
        createBrotliDecompress({
          flush: constants.BROTLI_OPERATION_FLUSH,
          finishFlush: constants.BROTLI_OPERATION_FLUSH,
        }),
      );
    } else return [];
  }
  return decoders;
}

/**
 * `deflate` as servers send it: zlib-wrapped (RFC 1950) when the first byte's low bits are 8, raw
 * (RFC 1951, some servers' reading of the name) otherwise, as fetch tells them apart.
 */
function inflateEither(): Transform {
  let inflate: Transform | undefined;
  const either: Transform = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (!inflate) {
        if (chunk.length === 0) return done();
        inflate =
          ((chunk[0] as number) & 0x0f) === 0x08
            ? createInflate(ZLIB_FLUSH)
            : createInflateRaw(ZLIB_FLUSH);
        inflate.on("data", (out: Buffer) => either.push(out));
        inflate.on("end", () => either.push(null));
        inflate.on("error", (error) => either.destroy(error));
      }
      inflate.write(chunk, done);
    },
    // In place of Transform's own end: the readable side ends when the inflater has.
    final(done) {
      if (inflate) inflate.end();
      else either.push(null);
      done();
    },
  });
  return either;
}
