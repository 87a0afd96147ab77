/**
 * Every platform call is bounded in time, headers and body together: against a real socket on
 * loopback whose answer trickles in for ever, each attempt ends at the call's timeout, the
 * attempts are those configured, and every connection is dropped, even when garbage collections
 * run during the read (with `AbortSignal.timeout` handed to fetch, a collection cut the timeout off
 * from the body, which was then read for ever: a service stuck in a poll, a heartbeat or an upload).
 */
import { describe, expect, it, vi } from "vitest";
import { NetworkError } from "../../lib/http";
import { PlatformClient, type PlatformClientOptions } from "../../lib/platform";
import { loopbackServer, trickleForever, within } from "../helpers/slowAnswers";
import { gzipFileOf } from "./helpers";

const TIMEOUT_MS = 300;
const ATTEMPTS = 3;
const TOKEN = "trickle-token-000123";

/**
 * A platform whose answers to `trickled` (a path) send their headers and a `{` at once, then one
 * space (JSON whitespace) every 50 ms for as long as the client reads, with a full garbage
 * collection after each; any other path is the token endpoint, answered at once. It counts the
 * requests to `trickled` and the connections the client dropped.
 */
async function tricklingPlatform(trickled: string) {
  const seen = { requests: 0, closed: 0 };
  const url = await loopbackServer(async (req, res) => {
    const trickles = req.url === trickled;
    if (trickles) {
      seen.requests++;
      res.once("close", () => seen.closed++);
    }
    try {
      for await (const _ of req) {
        // The request's body (an upload's file) is read whole before the answer starts.
      }
    } catch {
      return; // The client gave the attempt up while sending it.
    }
    if (!trickles) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ access_token: TOKEN, expires_in: 3600 }));
      return;
    }
    trickleForever(res, "{", 50, { close: () => {} });
  });
  return { url, seen };
}

function client(url: string, overrides: Partial<PlatformClientOptions> = {}): PlatformClient {
  return new PlatformClient({
    baseUrl: url,
    clientId: "id",
    clientSecret: "trickle-secret-value",
    hostId: "h",
    timeoutMs: TIMEOUT_MS,
    // Far beyond the test's guard: a JSON call that took it would still be reading.
    uploadTimeoutMs: 60_000,
    retry: { attempts: ATTEMPTS, baseDelayMs: 1, maxDelayMs: 5 },
    ...overrides,
  });
}

/** What the call settled with, or "still reading" after ten times what its attempts may take. */
function outcome(work: Promise<unknown>): Promise<unknown> {
  return within(10 * ATTEMPTS * TIMEOUT_MS, work);
}

/**
 * The call gave up after its attempts, each at the timeout, and dropped every connection. The
 * client counts its attempts; the server may have seen fewer, as an attempt's timeout counts from
 * its start and a machine loaded enough can end one before its request arrives (the server saw 2
 * of 3 once, with two test suites running at once).
 */
async function expectGivenUp(
  error: unknown,
  call: string,
  seen: { requests: number; closed: number },
  platform: PlatformClient,
) {
  expect(error).toBeInstanceOf(NetworkError);
  expect((error as Error).message).toMatch(
    new RegExp(`^${call} got no answer: no complete answer within ${TIMEOUT_MS} ms`),
  );
  // Its attempts, and on a loaded machine a token call or two kept past the timeout, tried again.
  expect(platform.counters.statuses.timeout).toBeGreaterThanOrEqual(ATTEMPTS);
  expect(platform.counters.statuses.timeout).toBeLessThanOrEqual(ATTEMPTS + ATTEMPTS);
  expect(seen.requests).toBeGreaterThanOrEqual(1);
  expect(seen.requests).toBeLessThanOrEqual(ATTEMPTS);
  await vi.waitFor(() => expect(seen.closed).toBe(seen.requests));
}

describe("a platform answer that trickles in for ever", () => {
  it("ends a poll for tasks at the timeout of each attempt", async () => {
    const { url, seen } = await tricklingPlatform("/connector/v1/tasks/next");
    const platform = client(url);

    const error = await outcome(platform.nextTask());

    await expectGivenUp(error, "POST /connector/v1/tasks/next", seen, platform);
  });

  it("ends a heartbeat at the timeout when the caller passes a signal of its own", async () => {
    const { url, seen } = await tricklingPlatform("/connector/v1/tasks/t-1/heartbeat");
    // A long-lived signal, as the service's stop signal, that never fires.
    const signal = new AbortController().signal;

    const platform = client(url);

    const error = await outcome(platform.heartbeat("t-1", { signal }));

    await expectGivenUp(error, "POST /connector/v1/tasks/t-1/heartbeat", seen, platform);
  });

  it("ends the token request at the timeout", async () => {
    const { url, seen } = await tricklingPlatform("/auth/v1/token");

    const platform = client(url);

    const error = await outcome(platform.setStatus("syncing"));

    await expectGivenUp(error, "POST /auth/v1/token", seen, platform);
  });

  it("ends a snapshot upload at the upload timeout, the file sent again each attempt", async () => {
    const { url, seen } = await tricklingPlatform("/connector/v1/syncs/s-1/snapshot");
    const file = await gzipFileOf('{"kind":"sync_start"}\n');

    // The upload's own timeout, not the JSON calls'.
    const platform = client(url, { timeoutMs: 60_000, uploadTimeoutMs: TIMEOUT_MS });

    const error = await outcome(platform.uploadSnapshot("s-1", file));

    await expectGivenUp(error, "PUT /connector/v1/syncs/s-1/snapshot", seen, platform);
  });
});
