/**
 * The simulators' enforced limits: a sliding one-second window and a quota block. The window is
 * checked with explicit clock values; over HTTP only what does not depend on timing (the quota's
 * count, the headers on an accepted answer, its own time per answer).
 */
import { describe, expect, it } from "vitest";
import { startBlacklineSimulator } from "../../lib/simulators/blackline";
import { Throttle } from "../../lib/simulators/throttle";

describe("Throttle", () => {
  it("accepts requestsPerSecond in any one-second window and says when a slot frees", () => {
    const throttle = new Throttle();
    const limit = { requestsPerSecond: 3 };
    expect(throttle.check(limit, undefined, 0).accepted).toBe(true);
    expect(throttle.check(limit, undefined, 400).accepted).toBe(true);
    expect(throttle.check(limit, undefined, 800).accepted).toBe(true);
    const refused = throttle.check(limit, undefined, 900);
    expect(refused).toEqual({ accepted: false, headers: { "retry-after": "1" } });
    // The window slides: the request at 0 leaves it at 1000, the one at 400 at 1400.
    expect(throttle.check(limit, undefined, 1000).accepted).toBe(true);
    expect(throttle.check(limit, undefined, 1100).accepted).toBe(false);
    expect(throttle.check(limit, undefined, 1400).accepted).toBe(true);
    expect(throttle.refused).toBe(2);
  });

  it("leaves Retry-After out when asked, and sends the limit's state in either header family", () => {
    const quiet = new Throttle();
    const noRetryAfter = { requestsPerSecond: 1, retryAfter: false };
    quiet.check(noRetryAfter, undefined, 0);
    expect(quiet.check(noRetryAfter, undefined, 10)).toEqual({ accepted: false, headers: {} });

    const draft = new Throttle();
    const withHeaders = { requestsPerSecond: 2, headers: "ratelimit" as const };
    expect(draft.check(withHeaders, undefined, 0).headers).toEqual({
      "ratelimit-limit": "2",
      "ratelimit-remaining": "1",
      "ratelimit-reset": "1",
    });
    draft.check(withHeaders, undefined, 500);
    expect(draft.check(withHeaders, undefined, 600).headers).toEqual({
      "ratelimit-limit": "2",
      "ratelimit-remaining": "0",
      "ratelimit-reset": "1",
      "retry-after": "1",
    });
    const legacy = new Throttle().check(
      { requestsPerSecond: 5, headers: "x-ratelimit" },
      undefined,
      0,
    );
    expect(Object.keys(legacy.headers)).toEqual([
      "x-ratelimit-limit",
      "x-ratelimit-remaining",
      "x-ratelimit-reset",
    ]);
  });

  it("blocks everything for blockSeconds after every N accepted requests, without Retry-After", () => {
    const throttle = new Throttle();
    const quota = { requests: 2, blockSeconds: 90 };
    expect(throttle.check(undefined, quota, 0).accepted).toBe(true);
    expect(throttle.check(undefined, quota, 1).accepted).toBe(true);
    expect(throttle.check(undefined, quota, 2)).toEqual({ accepted: false, headers: {} });
    expect(throttle.check(undefined, quota, 89_999).accepted).toBe(false);
    expect(throttle.check(undefined, quota, 91_001).accepted).toBe(true);
    expect(throttle.check(undefined, quota, 91_002).accepted).toBe(true);
    expect(throttle.check(undefined, quota, 91_003).accepted).toBe(false);
  });
});

describe("a simulator with limits", () => {
  it("answers 429 without Retry-After during a quota block and counts it as throttled", async () => {
    const sim = await startBlacklineSimulator({
      faults: { quota: { requests: 2, blockSeconds: 600 } },
    });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const response = await fetch(`${sim.url}/authorize/connect/token`, { method: "POST" });
        statuses.push(response.status);
        if (response.status === 429) expect(response.headers.get("retry-after")).toBeNull();
        await response.arrayBuffer();
      }
      expect(statuses.slice(2)).toEqual([429, 429]);
      expect(statuses.slice(0, 2)).not.toContain(429);
      expect(sim.stats.throttled).toBe(2);
    } finally {
      await sim.close();
    }
  });

  it("measures its own time per answer: its latency at least, as the bench reports it", async () => {
    const sim = await startBlacklineSimulator({ faults: { latencyMs: 30 } });
    try {
      expect(sim.stats.meanAnswerMs).toBeUndefined();
      for (let i = 0; i < 3; i++) {
        const response = await fetch(`${sim.url}/authorize/connect/token`, { method: "POST" });
        await response.arrayBuffer();
      }
      // From each arrival to its answer's last byte: the 30 ms slept, plus the handler.
      expect(sim.stats.meanAnswerMs).toBeGreaterThanOrEqual(30);
      expect(sim.stats.meanAnswerMs).toBeLessThan(30_000);
    } finally {
      await sim.close();
    }
  });

  it("puts the limit's state on an accepted answer", async () => {
    const sim = await startBlacklineSimulator({
      faults: { limit: { requestsPerSecond: 1000, headers: "ratelimit" } },
    });
    try {
      const response = await fetch(`${sim.url}/authorize/connect/token`, { method: "POST" });
      await response.arrayBuffer();
      expect(response.headers.get("ratelimit-limit")).toBe("1000");
      expect(Number(response.headers.get("ratelimit-remaining"))).toBeLessThan(1000);
      expect(sim.stats.throttled).toBe(0);
    } finally {
      await sim.close();
    }
  });
});
