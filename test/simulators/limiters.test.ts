/**
 * The simulators' limiter catalogue against the libraries behind it. Token bucket and fixed window
 * run on vitest's fake clock (their libraries read `performance.now()` and `Date.now()`); the
 * sliding log's library reads `microtime`, which no fake clock reaches, so its tests use a window
 * of a minute and assert only what holds however long the test takes within it. Over HTTP, only
 * what does not depend on timing.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { startBlacklineSimulator } from "../../lib/simulators/blackline";
import { createLimiter, LimiterSettingsError } from "../../lib/simulators/limiters";

/** A token request without credentials: 400 when served, 429 when refused. */
const served = (status: number) => (status === 429 ? 429 : "served");

const admitted = async (limiter: ReturnType<typeof createLimiter>, n: number) => {
  const answers: boolean[] = [];
  for (let i = 0; i < n; i++) answers.push((await limiter.admit()).accepted);
  return answers;
};

describe("limiter settings", () => {
  it("names the field at fault and the kinds there are", () => {
    expect(() => createLimiter({ kind: "token_bucket", ratePerSecond: 50 })).toThrow(
      LimiterSettingsError,
    );
    expect(() => createLimiter({ kind: "token_bucket", ratePerSecond: 50 })).toThrow(
      /limiter\.burst: .*kinds: token_bucket/,
    );
    expect(() => createLimiter({ kind: "leaky", limit: 1 })).toThrow(/limiter\.kind/);
    expect(() =>
      createLimiter({ kind: "fixed_window", limit: 5, windowSeconds: 1, retryAfter: "soon" }),
    ).toThrow(/limiter\.retryAfter/);
  });

  it("answers a simulator's requests 500 naming the field when the setting does not parse", async () => {
    const sim = await startBlacklineSimulator({
      faults: { limiter: { kind: "in_flight", maxInFlight: 0 } },
    });
    try {
      const response = await fetch(`${sim.url}/authorize/connect/token`, { method: "POST" });
      expect(response.status).toBe(500);
      expect(await response.text()).toMatch(/limiter\.maxInFlight/);
    } finally {
      await sim.close();
    }
  });
});

describe("on a fake clock", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000, toFake: ["Date", "performance", "setTimeout"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("token bucket: starts full, refills at the rate, never past the burst", async () => {
    const limiter = createLimiter({ kind: "token_bucket", ratePerSecond: 50, burst: 5 });
    expect(await admitted(limiter, 6)).toEqual([true, true, true, true, true, false]);
    vi.advanceTimersByTime(20);
    expect(await admitted(limiter, 2)).toEqual([true, false]);
    vi.advanceTimersByTime(10_000);
    expect(await admitted(limiter, 6)).toEqual([true, true, true, true, true, false]);
  });

  it("token bucket: a refused request takes no token", async () => {
    const limiter = createLimiter({ kind: "token_bucket", ratePerSecond: 50, burst: 1 });
    expect(await admitted(limiter, 1)).toEqual([true]);
    for (let i = 0; i < 5; i++) {
      vi.advanceTimersByTime(3);
      expect((await limiter.admit()).accepted).toBe(false);
    }
    vi.advanceTimersByTime(5);
    expect(await admitted(limiter, 2)).toEqual([true, false]);
  });

  it("token bucket: Retry-After forms and the state headers", async () => {
    const seconds = createLimiter({
      kind: "token_bucket",
      ratePerSecond: 0.5,
      burst: 2,
      headers: "ratelimit",
    });
    expect((await seconds.admit()).headers).toEqual({
      "ratelimit-limit": "2",
      "ratelimit-remaining": "1",
      "ratelimit-reset": "2",
    });
    await seconds.admit();
    // Empty: the next token in 2 s, the bucket full in 4 s.
    expect(await seconds.admit()).toEqual({
      accepted: false,
      headers: {
        "ratelimit-limit": "2",
        "ratelimit-remaining": "0",
        "ratelimit-reset": "4",
        "retry-after": "2",
      },
    });
    const date = createLimiter({
      kind: "token_bucket",
      ratePerSecond: 0.5,
      burst: 1,
      retryAfter: "date",
    });
    await date.admit();
    expect((await date.admit()).headers).toEqual({
      "retry-after": new Date(1_000_000 + 2_000).toUTCString(),
    });
    const none = createLimiter({
      kind: "token_bucket",
      ratePerSecond: 0.5,
      burst: 1,
      retryAfter: "none",
      headers: "x-ratelimit",
    });
    await none.admit();
    expect(await none.admit()).toEqual({
      accepted: false,
      headers: { "x-ratelimit-limit": "1", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "2" },
    });
  });

  it("fixed window: the limit per window from its first request, then a fresh window", async () => {
    const limiter = createLimiter({
      kind: "fixed_window",
      limit: 3,
      windowSeconds: 10,
      headers: "ratelimit",
    });
    expect(await admitted(limiter, 3)).toEqual([true, true, true]);
    vi.advanceTimersByTime(4_000);
    expect(await limiter.admit()).toEqual({
      accepted: false,
      headers: {
        "ratelimit-limit": "3",
        "ratelimit-remaining": "0",
        "ratelimit-reset": "6",
        "retry-after": "6",
      },
    });
    vi.advanceTimersByTime(5_999);
    expect((await limiter.admit()).accepted).toBe(false);
    vi.advanceTimersByTime(1);
    // The refusals above counted in the old window only: the new one starts from 0.
    expect(await admitted(limiter, 4)).toEqual([true, true, true, false]);
  });

  it("fixed window opened at the start: the first request meets it part spent in time", async () => {
    const limiter = createLimiter({
      kind: "fixed_window",
      limit: 3,
      windowSeconds: 10,
      opensAt: "start",
      headers: "ratelimit",
    });
    vi.advanceTimersByTime(7_000);
    expect(await admitted(limiter, 4)).toEqual([true, true, true, false]);
    vi.advanceTimersByTime(3_000);
    expect(await admitted(limiter, 3)).toEqual([true, true, true]);
    expect((await limiter.admit()).headers["retry-after"]).toBe("10");
  });
});

describe("sliding log (rolling-rate-limiter, the system clock)", () => {
  it("accepts the limit in the window, then refuses until a slot frees", async () => {
    const limiter = createLimiter({
      kind: "sliding_log",
      limit: 3,
      windowSeconds: 60,
      headers: "ratelimit",
    });
    try {
      expect(await admitted(limiter, 5)).toEqual([true, true, true, false, false]);
      const refused = await limiter.admit();
      expect(refused.accepted).toBe(false);
      // A minute from the first request, less the moments this test took.
      expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(59);
      expect(Number(refused.headers["retry-after"])).toBeLessThanOrEqual(60);
      expect(refused.headers["ratelimit-remaining"]).toBe("0");
      expect(refused.headers["ratelimit-reset"]).toBe("60");
    } finally {
      limiter.close();
    }
  });
});

describe("cap on requests in flight", () => {
  it("refuses past maxInFlight until one is released, and does not count a refusal", async () => {
    const limiter = createLimiter({ kind: "in_flight", maxInFlight: 2, headers: "ratelimit" });
    expect(await admitted(limiter, 3)).toEqual([true, true, false]);
    limiter.release();
    expect((await limiter.admit()).headers).toEqual({
      "ratelimit-limit": "2",
      "ratelimit-remaining": "0",
      "ratelimit-reset": "0",
    });
    expect((await limiter.admit()).headers["retry-after"]).toBe("1");
  });
});

describe("a simulator with a limiter", () => {
  const token = (url: string) => fetch(`${url}/authorize/connect/token`, { method: "POST" });

  it("answers the limiter's 429 with its headers and counts it as throttled", async () => {
    const sim = await startBlacklineSimulator({
      // One token every 1,000 s: the third request is refused however fast the test runs.
      faults: {
        limiter: { kind: "token_bucket", ratePerSecond: 0.001, burst: 2, retryAfter: "date" },
      },
    });
    try {
      const statuses: number[] = [];
      let retryAfter: string | null = null;
      for (let i = 0; i < 3; i++) {
        const response = await token(sim.url);
        statuses.push(response.status);
        if (response.status === 429) retryAfter = response.headers.get("retry-after");
        await response.arrayBuffer();
      }
      expect(statuses.map(served)).toEqual(["served", "served", 429]);
      expect(Date.parse(retryAfter ?? "")).toBeGreaterThan(Date.now());
      expect(sim.stats.throttled).toBe(1);
    } finally {
      await sim.close();
    }
  });

  it("releases a slot of the in-flight cap when an answer has been sent", async () => {
    const sim = await startBlacklineSimulator({
      faults: { latencyMs: 5, limiter: { kind: "in_flight", maxInFlight: 1 } },
    });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const response = await token(sim.url);
        statuses.push(response.status);
        await response.arrayBuffer();
      }
      expect(statuses.map(served)).toEqual(["served", "served", "served", "served", "served"]);
      expect(sim.stats.throttled).toBe(0);
    } finally {
      await sim.close();
    }
  });

  it("takes a new limiter when the setting is replaced while it runs", async () => {
    const sim = await startBlacklineSimulator({
      faults: { limiter: { kind: "fixed_window", limit: 1, windowSeconds: 600 } },
    });
    try {
      const first = [await token(sim.url), await token(sim.url)];
      sim.faults.limiter = { kind: "fixed_window", limit: 1, windowSeconds: 600 };
      const second = [await token(sim.url), await token(sim.url)];
      for (const response of [...first, ...second]) await response.arrayBuffer();
      expect([...first, ...second].map((r) => served(r.status))).toEqual([
        "served",
        429,
        "served",
        429,
      ]);
    } finally {
      await sim.close();
    }
  });
});
