/**
 * Requests over node:http (lib/http/nodeRequest.ts) send and read what fetch did before them:
 * against a real server on loopback, each body encoding decodes to the text fetch gives, the
 * request carries the headers fetch added, a form or JSON body arrives as fetch sent it, a
 * redirect fails as fetch's `redirect: "error"` did, and requests one after another share one
 * keep-alive connection.
 */
import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { HttpClient, NetworkError, newRequestContext, RateLimiter } from "../../lib/http";
import { type NodeRequest, nodeRequest } from "../../lib/http/nodeRequest";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

const TEXT = JSON.stringify({ items: [{ id: 1, name: "Zürich Tax ✓" }], totalItems: 1 });

/** Each path's body, encoded as its name says. */
const ENCODED: Record<string, { coding: string; body: Buffer }> = {
  "/gzip": { coding: "gzip", body: gzipSync(TEXT) },
  "/x-gzip": { coding: "x-gzip", body: gzipSync(TEXT) },
  "/deflate": { coding: "deflate", body: deflateSync(TEXT) },
  "/deflate-raw": { coding: "deflate", body: deflateRawSync(TEXT) },
  "/br": { coding: "br", body: brotliCompressSync(TEXT) },
  "/gzip-then-br": { coding: "gzip, br", body: brotliCompressSync(gzipSync(TEXT)) },
  "/unknown": { coding: "compress", body: Buffer.from("not decoded") },
  "/identity": { coding: "identity", body: Buffer.from(TEXT) },
};

async function start(
  handle: Parameters<typeof createServer>[1],
): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  server = createServer(handle);
  server.on("connection", () => connections++);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
  };
}

const never = new AbortController().signal;
const tooLarge = () => new Error("too large");
const GET = { method: "GET", headers: {} };

describe("requests over node:http", () => {
  it("decodes each content coding to the text fetch reads, and sends the headers fetch sent", async () => {
    const seen: IncomingHttpHeaders[] = [];
    const { url } = await start((req, res) => {
      seen.push(req.headers);
      const { coding, body } = ENCODED[req.url ?? ""] ?? { coding: "identity", body: Buffer.of() };
      res.writeHead(200, { "content-type": "application/json", "content-encoding": coding });
      res.end(body);
    });

    for (const path of Object.keys(ENCODED)) {
      const viaFetch = await (await fetch(`${url}${path}`)).text();
      const ours = await nodeRequest(new URL(`${url}${path}`), GET, never, 1_000_000, tooLarge);
      expect(ours.body.toString("utf8"), path).toBe(viaFetch);
      expect(ours.headers.get("content-encoding"), path).toBe(ENCODED[path]?.coding);
    }
    for (const header of ["accept-encoding", "accept-language", "user-agent"]) {
      expect(seen[1]?.[header], header).toBe(seen[0]?.[header]);
    }
  });

  it("sends a form, a JSON body and an empty POST as fetch sent them", async () => {
    // What reached the server: method, the headers fetch sets or keeps (in name order; fetch's
    // `sec-fetch-mode: cors` is a browser's header, which the GETs above never sent either), and
    // the body's bytes.
    const seen: unknown[] = [];
    const { url } = await start((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const { host: _, connection: __, "sec-fetch-mode": ___, ...headers } = req.headers;
        const sorted = Object.fromEntries(
          Object.entries(headers).sort(([a], [b]) => a.localeCompare(b)),
        );
        seen.push({
          method: req.method,
          headers: sorted,
          body: Buffer.concat(chunks).toString("hex"),
        });
        res.writeHead(201, { "content-type": "application/json" });
        res.end(TEXT);
      });
    });
    const sends: NodeRequest[] = [
      {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          accept: "application/json",
        },
        body: new URLSearchParams({ grant_type: "password", password: "p ß€ +/=" }).toString(),
      },
      {
        method: "PATCH",
        headers: { "content-type": "application/scim+json" },
        body: JSON.stringify({ Operations: [{ op: "replace", value: { active: false } }] }),
      },
      { method: "POST", headers: {} },
    ];

    for (const send of sends) {
      const viaFetch = await fetch(url, send);
      const fetchBody = await viaFetch.text();
      const ours = await nodeRequest(new URL(url), send, never, 1_000_000, tooLarge);

      const [sentByFetch, sentByOurs] = seen.splice(0);
      expect(sentByOurs, send.method).toEqual(sentByFetch);
      expect(ours.status).toBe(viaFetch.status);
      expect(ours.body.toString("utf8")).toBe(fetchBody);
    }
  });

  it("reads an answer's headers as fetch's Headers.get did: any case, repeats joined", async () => {
    const { url } = await start((_req, res) => {
      // Raw headers as sent: a name in mixed case, one sent twice.
      res.writeHead(429, [
        ["Retry-After", "2"],
        ["RateLimit-Remaining", "5"],
        ["ratelimit-remaining", "4"],
        ["Content-Type", "application/json"],
      ]);
      res.end(TEXT);
    });

    const viaFetch = await fetch(url);
    await viaFetch.text();
    const ours = await nodeRequest(new URL(url), GET, never, 1_000_000, tooLarge);

    for (const name of ["retry-after", "Retry-After", "RATELIMIT-REMAINING", "x-absent"]) {
      expect(ours.headers.get(name), name).toBe(viaFetch.headers.get(name));
    }
    expect(ours.headers.get("ratelimit-remaining")).toBe("5, 4");
  });

  it("fails a redirect as fetch's redirect: error did, and follows none", async () => {
    let requests = 0;
    const { url } = await start((_req, res) => {
      requests++;
      res.writeHead(302, { location: "/elsewhere" });
      res.end();
    });
    const http = new HttpClient({
      baseUrl: url,
      limiter: new RateLimiter({ maxConcurrency: 1, requestsPerSecond: 0 }),
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
    });

    const error = await http
      .request({ method: "GET", path: "/v1/users" }, newRequestContext())
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(NetworkError);
    expect((error as Error).message).toBe("GET /v1/users got no answer: unexpected redirect");
    expect(requests).toBe(2);
  });

  it("sends requests one after another on one keep-alive connection", async () => {
    const { url, connections } = await start((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(TEXT);
    });

    for (let i = 0; i < 5; i++) {
      const answer = await nodeRequest(
        new URL(`${url}/page/${i}`),
        GET,
        never,
        1_000_000,
        tooLarge,
      );
      expect(answer.status).toBe(200);
    }

    expect(connections()).toBe(1);
  });
});
