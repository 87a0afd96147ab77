/** Hostile answers: bodies over the size cap, plain or as a compression bomb. */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import {
  HttpClient,
  isRetryableError,
  newRequestContext,
  RateLimiter,
  ResponseTooLargeError,
} from "../../lib/http";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

async function serve(body: Buffer, headers: Record<string, string>): Promise<string> {
  server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json", ...headers });
    res.end(body);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function client(baseUrl: string) {
  return new HttpClient({
    baseUrl,
    limiter: new RateLimiter({ maxConcurrency: 1, requestsPerSecond: 0 }),
    maxResponseBytes: 1_000_000,
    retry: { baseDelayMs: 1, maxDelayMs: 2 },
  });
}

describe("the response size cap", () => {
  it("stops reading an answer over the cap, says which bound, and does not try again", async () => {
    const url = await serve(Buffer.from(`"${"x".repeat(3_000_000)}"`), {});
    const ctx = newRequestContext();

    const error = await client(url)
      .request({ method: "GET", path: "/big" }, ctx)
      .catch((e) => e);

    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect((error as Error).message).toMatch(
      /^GET \/big: the answer is larger than 1000000 bytes, the response size cap, so it was not read/,
    );
    expect(isRetryableError(error)).toBe(false);
    expect(ctx.counters.requests).toBe(1);
  });

  it("counts after decompression, so a gzip bomb is stopped too", async () => {
    const bomb = gzipSync(Buffer.alloc(50_000_000, 0x20));
    expect(bomb.length).toBeLessThan(100_000);
    const url = await serve(bomb, { "content-encoding": "gzip" });

    const error = await client(url)
      .request({ method: "GET", path: "/bomb" }, newRequestContext())
      .catch((e) => e);

    expect(error).toBeInstanceOf(ResponseTooLargeError);
  });

  it("reads an answer under the cap as before", async () => {
    const url = await serve(Buffer.from(JSON.stringify({ ok: true })), {});
    const answer = await client(url).request({ method: "GET", path: "/" }, newRequestContext());
    expect(answer.body).toEqual({ ok: true });
  });
});

describe("upstream text in messages", () => {
  it("is quoted with control characters escaped and cut to 200 characters", async () => {
    const hostile = `bad\u001b[31m red\r\n{"level":"info","message":"forged"}${"z".repeat(5000)}`;
    const url = await serve(Buffer.from(JSON.stringify({ message: hostile })), {});
    server?.removeAllListeners("request");
    server?.on("request", (_req, res) => {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ message: hostile }));
    });

    const error = (await client(url)
      .request({ method: "GET", path: "/x" }, newRequestContext())
      .catch((e: unknown) => e)) as Error;

    // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting their absence
    expect(error.message).not.toMatch(/[\u0000-\u001f]/);
    expect(error.message).toContain("bad\\u001b[31m red\\u000d\\u000a{");
    expect(error.message.length).toBeLessThan(400);
  });
});
