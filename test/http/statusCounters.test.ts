/**
 * How each request sent ended (`HttpCounters.statuses`) and the rate the limiter learned
 * (`learnedRate`), against real simulators on loopback: the counts are the simulator's own.
 */
import { afterEach, describe, expect, it } from "vitest";
import { HttpClient, newRequestContext, RateLimiter } from "../../lib/http";
import { type BlacklineSimulator, startBlacklineSimulator } from "../../lib/simulators/blackline";
import type { FaultSettings } from "../../lib/simulators/faults";
import { type RunningSimulator, startSimServer } from "../../lib/simulators/httpServer";
import { syncBlackline } from "../helpers/blackline";
import { makeTempDir } from "../helpers/tempDir";

let sim: BlacklineSimulator | RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const SIZE = { users: 300, teams: 10, roles: 3 };
/** The learned rate (no REQUESTS_PER_SECOND), pages of 50. */
const LEARNED = {
  CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "",
  CONNECTOR_ACCOUNTING_MAX_CONCURRENCY: "8",
  CONNECTOR_ACCOUNTING_PAGE_SIZE: "50",
};

describe("requests by how they ended, and the learned rate", () => {
  it("a sync against an upstream limited to 8 requests/s: the 429s are the simulator's refusals, the rest 200", async () => {
    // Prepare: the client starts at 20 requests/s, so it crosses the limit within its first second
    // (measured: 8 to 11 of 30 to 33 requests refused).
    sim = await startBlacklineSimulator({
      seed: 3,
      size: SIZE,
      faults: { limit: { requestsPerSecond: 8 } },
    });

    // Act
    const { counters } = await syncBlackline(sim, await makeTempDir(), { env: LEARNED });

    // Assess: the rate learned from 429s alone depends on how the controller judged them (a
    // client this slow, a page at a time per list, may take a few for noise and learn none:
    // seen once in 3 runs); the next test learns one for certain.
    const throttled = sim.stats.throttled;
    expect(throttled).toBeGreaterThan(0);
    expect(counters.statuses).toEqual({ 200: sim.stats.requests - throttled, 429: throttled });
    expect(counters.requests).toBe(sim.stats.requests);
  });

  it("a sync against an upstream that announces its limit of 40 requests per 10 s in RateLimit headers: the rate learned is the limit", async () => {
    // The headers count once half the limit is spent: 20 requests within 10 s, whatever the load.
    sim = await startBlacklineSimulator({
      seed: 3,
      size: SIZE,
      faults: {
        limiter: { kind: "fixed_window", limit: 40, windowSeconds: 10, headers: "ratelimit" },
      },
    });

    const { counters } = await syncBlackline(sim, await makeTempDir(), { env: LEARNED });

    // No 429 can come (the sync sends 22 requests in all), so only the headers taught the rate.
    expect(sim.stats.throttled).toBe(0);
    expect(counters.statuses).toEqual({ 200: sim.stats.requests });
    // 40 per the longest Reset seen: 10 s (9 s if the first answer came a second late).
    expect(counters.learnedRate).toBeGreaterThanOrEqual(4);
    expect(counters.learnedRate).toBeLessThanOrEqual(40 / 9);
  });

  it("an unlimited upstream: every request 200, no rate learned; a configured rate learns none either", async () => {
    sim = await startBlacklineSimulator({ seed: 3, size: SIZE });
    const learned = await syncBlackline(sim, await makeTempDir(), { env: LEARNED });
    expect(learned.counters.statuses).toEqual({ 200: sim.stats.requests });
    expect(learned.counters.learnedRate).toBe(0);

    const before = sim.stats.requests;
    const fixed = await syncBlackline(sim, await makeTempDir(), {
      env: { ...LEARNED, CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "500" },
    });
    expect(fixed.counters.statuses).toEqual({ 200: sim.stats.requests - before });
    expect(fixed.counters.learnedRate).toBe(0);
  });

  it("no answer: dropped connections, timeouts, answers over the size bound and aborts each have their count, all adding up to the requests sent", async () => {
    // Prepare: n=2 dropped, n=3 answered after 5 s (beyond the 1 s timeout), n=4 oversized.
    let faults: FaultSettings = {
      dropConnections: { every: 2 },
      slowResponses: { every: 3, delayMs: 5000 },
    };
    sim = await startSimServer(
      (request) => ({
        status: request.url.pathname === "/missing" ? 404 : 200,
        body: { pad: request.url.pathname === "/large" ? "x".repeat(2000) : "" },
      }),
      () => faults,
    );
    const http = new HttpClient({
      baseUrl: sim.url,
      limiter: new RateLimiter({ maxConcurrency: 4, requestsPerSecond: 0 }),
      retry: { maxAttempts: 1 },
      timeoutMs: 1000,
      maxResponseBytes: 1000,
    });
    const ctx = newRequestContext();
    const send = (path: string, c = ctx) =>
      http.request({ method: "GET", path }, c).catch(() => undefined);

    // Act
    await send("/ok"); // n=1: 200
    await send("/dropped"); // n=2
    await send("/slow"); // n=3
    faults = {};
    await send("/large"); // n=4
    await send("/missing"); // n=5: 404
    faults = { slowResponses: { every: 1, delayMs: 5000 } };
    const aborting = new AbortController();
    const aborted = send("/aborted", { ...ctx, signal: aborting.signal });
    // Aborted once the simulator has the request (it counts on arrival).
    while (sim.requests < 6) await new Promise((resolve) => setImmediate(resolve));
    aborting.abort();
    await aborted;

    // Assess
    expect(ctx.counters.statuses).toEqual({
      200: 1,
      404: 1,
      network_error: 1,
      timeout: 1,
      too_large: 1,
      aborted: 1,
    });
    expect(ctx.counters.requests).toBe(6);
    expect(sim.requests).toBe(6);
  });
});
