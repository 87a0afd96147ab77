import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  AbortedError,
  HttpClient,
  HttpStatusError,
  isRetryableError,
  NetworkError,
  newRequestContext,
  RateLimitedError,
  RateLimiter,
  type SharedRate,
  TokenCache,
} from "../../lib/http";
import { silentLogger } from "../../lib/logging";
import { redact, registerSecret } from "../../lib/redact";
import type { FaultSettings } from "../../lib/simulators/faults";
import {
  type RunningSimulator,
  type SimHandler,
  startSimServer,
} from "../../lib/simulators/httpServer";

let server: RunningSimulator | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(handler: SimHandler, faults: FaultSettings = {}) {
  server = await startSimServer(handler, () => faults);
  return server;
}

/** A server whose first answer, and the next after `refuseNext`, is a 429 asking for 1 s. */
async function serveOneRefusal() {
  let armed = true;
  server = await startSimServer(
    () => ({ status: 200, body: {} }),
    () => {
      const fault: FaultSettings = armed
        ? { rateLimit: { every: 1, retryAfter: "seconds", seconds: 1 } }
        : {};
      armed = false;
      return fault;
    },
  );
  const refuseNext = () => {
    armed = true;
  };
  return { url: server.url, refuseNext };
}

/** A client whose calls without a context count into `counters`. */
function client(url: string, extra: Partial<ConstructorParameters<typeof HttpClient>[0]> = {}) {
  const context = newRequestContext();
  const http = new HttpClient({
    baseUrl: url,
    limiter: new RateLimiter({ maxConcurrency: 4, requestsPerSecond: 0 }),
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
    context,
    ...extra,
  });
  return { http, counters: context.counters };
}

/** The context of token fetches made directly on a cache. */
const ctx = newRequestContext();

describe("HttpClient", () => {
  it("retries a GET through 502, 503 and 504, but never repeats a POST after one", async () => {
    const { url } = await serve(() => ({ status: 200, body: { ok: true } }), {
      serverErrors: { every: 100, burst: 3 },
    });
    const { http, counters } = client(url);

    const post = http.request({ method: "POST", path: "/things", json: {} });
    await expect(post).rejects.toBeInstanceOf(HttpStatusError);
    const get = await http.request({ method: "GET", path: "/things" });

    expect(get.body).toEqual({ ok: true });
    // n=1 failed (POST, not repeated); n=2 failed, n=3 and the GET's third attempt succeeded.
    expect(counters.requests).toBe(3);
    expect(counters.retries).toBe(1);
  });

  it("retries a PATCH marked idempotent, and a 429 whatever the method", async () => {
    const { url } = await serve(() => ({ status: 200, body: {} }), {
      rateLimit: { every: 4 },
      serverErrors: { every: 100, burst: 3 },
    });
    const { http, counters } = client(url);

    await http.request({ method: "PATCH", path: "/x", json: {}, idempotent: true }); // n=1, 2 fail; 3 ok
    await http.request({ method: "POST", path: "/y", json: {} }); // n=4 is a 429; 5 ok

    expect(counters.requests).toBe(5);
    expect(counters.retries).toBe(3);
    expect(counters.rateLimitWaits).toBe(1);
  });

  it("gives up after maxAttempts and says how the last attempt ended", async () => {
    const { url } = await serve(() => ({ status: 503, body: { message: "down for maintenance" } }));
    const { http, counters } = client(url, {
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
    });

    const error = await http
      .request({ method: "GET", path: "/users?page=1" })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(HttpStatusError);
    expect((error as HttpStatusError).message).toBe(
      "GET /users?page=1 answered 503: down for maintenance",
    );
    expect(counters.requests).toBe(3);
  });

  it("retries dropped connections and timeouts for GET, and reports them as network errors otherwise", async () => {
    const { url } = await serve(() => ({ status: 200, body: { ok: 1 } }), {
      dropConnections: { every: 2 },
      slowResponses: { every: 3, delayMs: 1000 },
    });
    const { http, counters } = client(url, { timeoutMs: 200 });

    await http.request({ method: "GET", path: "/a" }); // n=1
    await http.request({ method: "GET", path: "/b" }); // n=2 dropped, n=3 slow, n=4 dropped, n=5 ok
    const post = await http
      .request({ method: "POST", path: "/c", json: {} })
      .catch((e: unknown) => e); // n=6 dropped

    expect(counters.requests).toBe(6);
    expect(post).toBeInstanceOf(NetworkError);
    expect((post as Error).message).toMatch(/^POST \/c got no answer/);
  });

  it("throws a rate limit with its wait, without sleeping, for a caller that asks to be told", async () => {
    let faults: FaultSettings = { rateLimit: { every: 1, retryAfter: "seconds", seconds: 30 } };
    server = await startSimServer(
      () => ({ status: 200, body: {} }),
      () => faults,
    );
    const { url } = server;
    const { http } = client(url);
    const ctx = newRequestContext({ onRateLimit: "throw" });

    const started = Date.now();
    const error = await http.request({ method: "GET", path: "/x" }, ctx).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error).toMatchObject({ code: "rate_limited", waitMs: 30_000 });
    expect(isRetryableError(error)).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(ctx.counters.requests).toBe(1);
    // It waits elsewhere (a queue's delay), so its 429 holds no one: the next call goes at once.
    faults = {};
    const next = await http.request({ method: "GET", path: "/y" }, ctx);
    expect(next.status).toBe(200);
    expect(ctx.counters.requests).toBe(2);
  });

  it("waits a first short 429 in place within the call's budget, and throws the second, a longer one, and one past the budget", async () => {
    // Prepare: the first answer is a 429 asking for 1 s; the call may wait 1.5 s in place in all.
    const { url, refuseNext } = await serveOneRefusal();
    const { http } = client(url);
    const ctx = newRequestContext({ onRateLimit: "throw", waitInPlace: { leftMs: 1_500 } });

    // Act: one request refused once, then accepted.
    const started = Date.now();
    const answer = await http.request({ method: "GET", path: "/x" }, ctx);

    // Assess: tried again after the server's second, in place.
    expect(answer.status).toBe(200);
    expect(ctx.counters.requests).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);

    // Act: another request of the same call refused for 1 s, with half a second of budget left.
    refuseNext();
    const past = await http.request({ method: "GET", path: "/y" }, ctx).catch((e: unknown) => e);

    // Assess: thrown at once, for the queue to wait.
    expect(past).toBeInstanceOf(RateLimitedError);
    expect(ctx.counters.requests).toBe(3);

    // Act: every answer a 429 asking for 1 s, then one asking for 3 s.
    const refusing = await startSimServer(
      () => ({ status: 200, body: {} }),
      () => ({ rateLimit: { every: 1, retryAfter: "seconds", seconds: 1 } }),
    );
    const long = await startSimServer(
      () => ({ status: 200, body: {} }),
      () => ({ rateLimit: { every: 1, retryAfter: "seconds", seconds: 3 } }),
    );
    const bare = await startSimServer(
      () => ({ status: 200, body: {} }),
      () => ({ rateLimit: { every: 2, retryAfter: "none" } }),
    );
    try {
      const again = newRequestContext({ onRateLimit: "throw", waitInPlace: { leftMs: 5_000 } });
      const twice = await client(refusing.url)
        .http.request({ method: "GET", path: "/x" }, again)
        .catch((e: unknown) => e);
      const longer = newRequestContext({ onRateLimit: "throw", waitInPlace: { leftMs: 1_000 } });
      const once = await client(long.url)
        .http.request({ method: "GET", path: "/x" }, longer)
        .catch((e: unknown) => e);

      // A 429 without Retry-After (every second answer) is tried again at once, spending nothing.
      const unsaid = newRequestContext({ onRateLimit: "throw", waitInPlace: { leftMs: 0 } });
      const bareHttp = client(bare.url).http;
      await bareHttp.request({ method: "GET", path: "/a" }, unsaid);
      const retried = await bareHttp.request({ method: "GET", path: "/b" }, unsaid);
      expect(retried.status).toBe(200);
      expect(unsaid.counters.requests).toBe(3);

      // Assess: the second 429 of a request, and a wait over the bound, go back to the caller.
      expect(twice).toBeInstanceOf(RateLimitedError);
      expect(again.counters.requests).toBe(2);
      expect(once).toMatchObject({ code: "rate_limited", waitMs: 3_000 });
      expect(longer.counters.requests).toBe(1);
    } finally {
      await refusing.close();
      await long.close();
      await bare.close();
    }
  });

  it("tells a shared rate how the upstream answered each request it permitted", async () => {
    let faults: FaultSettings = { rateLimit: { every: 1, retryAfter: "seconds", seconds: 3 } };
    server = await startSimServer(
      () => ({ status: 200, body: {} }),
      () => faults,
    );
    const { http } = client(server.url);
    const told: string[] = [];
    const sharedRate: SharedRate = {
      async permit() {
        return {
          accepted: () => told.push("accepted"),
          refused: async (retryAfterMs) => {
            told.push(`refused ${retryAfterMs}`);
          },
          unanswered: () => told.push("unanswered"),
        };
      },
    };
    const ctx = newRequestContext({ onRateLimit: "throw", sharedRate });

    await http.request({ method: "GET", path: "/x" }, ctx).catch(() => {});
    faults = {};
    await http.request({ method: "GET", path: "/y" }, ctx);

    expect(told).toEqual(["refused 3000", "accepted"]);
  });

  it("leaves a 429 to the shared rate: this process's limiter, which sees only its share, learns no limit", async () => {
    server = await startSimServer(
      () => ({ status: 200, body: {} }),
      () => ({ rateLimit: { every: 1, retryAfter: "seconds", seconds: 3 } }),
    );
    const limiter = new RateLimiter({ maxConcurrency: 4, requestsPerSecond: 0 });
    const { http } = client(server.url, { limiter });
    const sharedRate: SharedRate = {
      permit: async () => ({ accepted() {}, async refused() {}, unanswered() {} }),
    };
    const send = (path: string, shared?: SharedRate) =>
      http
        .request(
          { method: "GET", path },
          newRequestContext({ onRateLimit: "throw", sharedRate: shared }),
        )
        .catch(() => {});

    for (const path of ["/a", "/b", "/c"]) await send(path, sharedRate);
    expect(limiter.learnedRate).toBe(0);
    // Without a shared rate, the same 429s teach this process's limiter (a cloud worker's, which
    // saw 1 or 2 a second of its own, paced its container at 1 a second).
    await send("/d");
    expect(limiter.learnedRate).toBeGreaterThan(0);
  });

  it("under a shared rate, ends a 429's wait in place once a request started after it is accepted", async () => {
    // Prepare: the first answer a 429 asking for 1 s, every later one accepted.
    const { url } = await serveOneRefusal();
    const { http } = client(url);
    // The shared slots: the first request's 100 ms on, the second's 120 ms after it asked (sent
    // after the first, though it started, its own limiter's permit, while the first waited).
    const waits = [100, 120];
    const sharedRate: SharedRate = {
      async permit() {
        await new Promise((r) => setTimeout(r, waits.shift() ?? 0));
        return { accepted() {}, async refused() {}, unanswered() {} };
      },
    };
    const ctx = () =>
      newRequestContext({ onRateLimit: "throw", waitInPlace: { leftMs: 2_000 }, sharedRate });

    // Act: a request refused, and another started 30 ms after it.
    const started = Date.now();
    const refused = http.request({ method: "GET", path: "/a" }, ctx());
    await new Promise((r) => setTimeout(r, 30));
    await http.request({ method: "GET", path: "/b" }, ctx());
    const answer = await refused;

    // Assess: tried again once the later one was accepted, well before the second asked for.
    expect(answer.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(800);
  });

  it("abandons a request and its backoff when the run's signal fires", async () => {
    const { url } = await serve(() => ({ status: 200, body: {} }), {
      rateLimit: { every: 1, retryAfter: "seconds", seconds: 30 },
    });
    const { http } = client(url);
    const ctx = newRequestContext({ signal: AbortSignal.timeout(200) });

    const error = await http.request({ method: "GET", path: "/x" }, ctx).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(AbortedError);
    expect(isRetryableError(error)).toBe(false);
  });

  it("waits a 429 out beyond the attempts, and fails naming the setting once its budget is spent", async () => {
    // Prepare: every answer is 429 with Retry-After: 1; two attempts for other errors, 2.5 s for 429s.
    const { url } = await serve(() => ({ status: 200, body: {} }), {
      rateLimit: { every: 1, retryAfter: "seconds", seconds: 1 },
    });
    const { http, counters } = client(url, {
      retry: { maxAttempts: 2 },
      rateLimitWait: { budgetMs: 2500, variable: "CONNECTOR_TEST_RATE_LIMIT_WAIT_SECONDS" },
    });

    // Act
    const error = await http.request({ method: "GET", path: "/" }).catch((e: unknown) => e);

    // Assess: more tries than maxAttempts, each after the server's second, then a precise error.
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as Error).message).toMatch(
      /^GET \/ was still refused with 429 after \d+ s of waiting.*a request waits at most 2\.5 s .*raise CONNECTOR_TEST_RATE_LIMIT_WAIT_SECONDS to wait longer/,
    );
    expect(counters.requests).toBeGreaterThanOrEqual(3);
    expect(counters.rateLimitWaits).toBe(counters.requests - 1);
    expect(counters.rateLimitWaitMs).toBeGreaterThanOrEqual(1000 * counters.rateLimitWaits - 50);
  });

  it("waits out backoffs and 429s of many requests with one listener on the run's signal", async () => {
    // Each path's first answer: a 503 (a backoff) for /retry-*, a 429 with Retry-After: 1 for /wait-*.
    const seen = new Set<string>();
    const { url } = await serve((req) => {
      const path = req.url.pathname;
      const first = !seen.has(path);
      seen.add(path);
      if (!first) return { status: 200, body: {} };
      return path.startsWith("/retry")
        ? { status: 503, body: {} }
        : { status: 429, body: {}, headers: { "retry-after": "1" } };
    });
    const run = new AbortController();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    const { http } = client(url, {
      limiter: new RateLimiter({ maxConcurrency: 24, requestsPerSecond: 0 }),
      retry: { baseDelayMs: 300, maxDelayMs: 300 },
      context: newRequestContext({ signal: run.signal }),
    });
    let most = 0;
    const watch = setInterval(() => {
      most = Math.max(most, getEventListeners(run.signal, "abort").length);
    }, 20);

    try {
      const paths = [
        ...Array.from({ length: 20 }, (_, i) => `/retry-${i}`),
        ...Array.from({ length: 4 }, (_, i) => `/wait-${i}`),
      ];
      await Promise.all(paths.map((path) => http.request({ method: "GET", path })));
    } finally {
      clearInterval(watch);
      process.off("warning", onWarning);
    }

    expect(seen.size).toBe(24);
    expect(most).toBe(1);
    expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
  });

  it("fetches a new token once on 401, and fails if the new one is rejected too", async () => {
    let issued = 0;
    const accepted = new Set<string>(["token-2"]);
    const { url } = await serve((req) =>
      accepted.has((req.headers.authorization ?? "").replace("Bearer ", ""))
        ? { status: 200, body: { ok: true } }
        : { status: 401, body: { detail: "Unauthorized" } },
    );
    const tokens = new TokenCache(async () => ({
      value: `token-${++issued}`,
      expiresAt: Date.now() + 3_600_000,
    }));
    const { http } = client(url, { tokens });

    const ok = await http.request({ method: "GET", path: "/me" });
    accepted.clear();
    const rejected = await http.request({ method: "GET", path: "/me" }).catch((e: unknown) => e);

    expect(ok.status).toBe(200);
    expect(issued).toBe(3);
    expect((rejected as HttpStatusError).status).toBe(401);
  });

  it("takes a 401 to a token that expired on the way for an expiry, not a rejection", async () => {
    // Tokens 1 and 2 live 30 ms and the answer takes 60: each has expired when its 401 arrives
    // (a one-second token under load). Token 3 lives an hour and is accepted.
    let issued = 0;
    const { url } = await serve(
      (req) =>
        req.headers.authorization === "Bearer token-3"
          ? { status: 200, body: { ok: true } }
          : { status: 401, body: { detail: "Unauthorized" } },
      { latencyMs: 60 },
    );
    const tokens = new TokenCache(async () => {
      issued++;
      return { value: `token-${issued}`, expiresAt: Date.now() + (issued < 3 ? 30 : 3_600_000) };
    });
    const { http } = client(url, { tokens });

    const answer = await http.request({ method: "GET", path: "/me" });

    expect(answer.status).toBe(200);
    expect(issued).toBe(3);
  });

  it("refreshes a token before it expires, with one fetch for concurrent callers", async () => {
    let fetches = 0;
    const tokens = new TokenCache(async () => {
      fetches++;
      return { value: `t${fetches}`, expiresAt: Date.now() + 500 };
    });

    const first = await Promise.all([tokens.get(ctx), tokens.get(ctx), tokens.get(ctx)]);
    await new Promise((r) => setTimeout(r, 420)); // past 4/5 of the lifetime
    const later = await tokens.get(ctx);

    expect(first).toEqual(["t1", "t1", "t1"]);
    expect(later).toBe("t2");
  });

  it("redacts every token it holds, and forgets replaced tokens once they have expired", async () => {
    let fetches = 0;
    const tokens = new TokenCache(async () => {
      fetches++;
      return {
        value: `expiring-${fetches}-${Math.random().toString(36).slice(2)}`,
        expiresAt: Date.now() + 200,
      };
    });

    const first = await tokens.get(ctx);
    await new Promise((r) => setTimeout(r, 250)); // the first token has expired
    const second = await tokens.get(ctx);
    const third = (await (async () => {
      tokens.invalidate(second);
      return tokens.get(ctx);
    })()) as string;

    expect(redact(`a ${third} b`)).toBe("a [REDACTED] b");
    // Replaced but not expired yet: still redacted.
    expect(redact(second)).toBe("[REDACTED]");
    // Replaced and expired: forgotten, so the registry does not grow without bound.
    expect(redact(first)).toBe(first);
  });

  it("redacts registered secrets from error messages", async () => {
    const secret = "s3cr3t-value-for-redaction";
    registerSecret(secret);
    const { url } = await serve(() => ({ status: 400, body: { message: `bad key ${secret}` } }));
    const { http } = client(url);

    const error = (await http
      .request({ method: "GET", path: `/echo/${secret}` })
      .catch((e: unknown) => e)) as Error;

    expect(error.message).not.toContain(secret);
    expect(error.message).toContain("[REDACTED]");
  });
});

describe("RateLimiter", () => {
  it("keeps at most maxConcurrency in flight, and a configured rate per second", async () => {
    const limiter = new RateLimiter({ maxConcurrency: 2, requestsPerSecond: 20 });
    let inFlight = 0;
    let peak = 0;
    const starts: number[] = [];

    await Promise.all(
      Array.from({ length: 24 }, async () => {
        const permit = await limiter.acquire();
        starts.push(Date.now());
        inFlight++;
        peak = Math.max(peak, inFlight);
        // Longer than the pace's 50 ms: starts overlap, two at most.
        await new Promise((r) => setTimeout(r, 70));
        inFlight--;
        permit?.accepted();
      }),
    );

    expect(peak).toBe(2);
    // 24 starts at 20 per second: the 21st is a second or more after the first (1,005 ms by the
    // limiter's clock; read here once each caller runs, which a loaded machine delays: 997 ms
    // with two test suites at once). Without the rate, 2 at a time for 70 ms: about 700 ms.
    expect((starts[20] ?? 0) - (starts[0] ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it("ends a refused request's short Retry-After wait once a request started after it is accepted", async () => {
    // No pace (0), so each start goes at once; a millisecond apart, so their starts order them.
    const limiter = new RateLimiter({ maxConcurrency: 4, requestsPerSecond: 0 });
    const pause = () => new Promise((r) => setTimeout(r, 2));
    const before = await limiter.acquire();
    await pause();
    const refused = await limiter.acquire();
    await pause();
    const after = await limiter.acquire();
    // A bucket's 429 says 1 s, the least the header can say; the refusal holds no one else.
    const verdict = refused?.refused(1000);
    expect(verdict?.blocked).toBe(false);
    const at = verdict?.retryAt ?? 0;
    const startedAt = verdict?.startedAt ?? 0;
    let ended = false;
    const waiting = limiter.untilRetry(at, startedAt).then(() => {
      ended = true;
    });

    // A request that started before the refused one says nothing of now: the wait goes on.
    before?.accepted();
    await pause();
    const afterEarlier = ended;
    // One that started after it was let in: the upstream admits again.
    after?.accepted();
    await waiting;

    expect(afterEarlier).toBe(false);
    expect(Date.now()).toBeLessThan(at);
  });

  it("waits a refused request's Retry-After out when nothing started after it is accepted", async () => {
    const limiter = new RateLimiter({ maxConcurrency: 4, requestsPerSecond: 0 });
    const refused = await limiter.acquire();
    const verdict = refused?.refused(1000);

    await limiter.untilRetry(verdict?.retryAt ?? 0, verdict?.startedAt ?? 0);

    expect(Date.now()).toBeGreaterThanOrEqual(verdict?.retryAt ?? Number.POSITIVE_INFINITY);
  });

  it("starts a request of higher priority before those that waited longer", async () => {
    const limiter = new RateLimiter({ maxConcurrency: 4, requestsPerSecond: 4 });
    (await limiter.acquire())?.accepted();
    const order: string[] = [];
    const start = (name: string, priority?: number) =>
      limiter.acquire({ priority }).then((permit) => {
        order.push(name);
        permit?.accepted();
      });
    // Paced evenly at 4 a second, the three wait behind the first; the list's next page goes
    // first.
    await Promise.all([start("member 1"), start("member 2"), start("next page", 1)]);
    expect(order).toEqual(["next page", "member 1", "member 2"]);
  });

  it("reports each move of the learned rate once, by the answer that caused it", async () => {
    vi.useFakeTimers({ now: 0 });
    try {
      const limiter = new RateLimiter({ maxConcurrency: 4, requestsPerSecond: 0 });
      expect(limiter.takeChange()).toBeUndefined();
      (await limiter.acquire())?.accepted();
      // An accepted answer moves nothing: the pace's growth is not a move.
      expect(limiter.takeChange()).toBeUndefined();

      await vi.advanceTimersByTimeAsync(100);
      expect((await limiter.acquire())?.refused(3000).blocked).toBe(true);
      const blocked = limiter.takeChange();
      expect(blocked?.moved).toMatch(/\bblocked$/);
      expect(blocked?.atMs).toBe(100);
      expect(limiter.takeChange()).toBeUndefined();

      const probe = limiter.acquire();
      await vi.advanceTimersByTimeAsync(3000);
      (await probe)?.accepted();
      expect(limiter.takeChange()).toMatchObject({ moved: "block over", atMs: 3100 });
    } finally {
      vi.useRealTimers();
    }
  });

  it("reports a cut by the very first answers, and nothing for an answer under a ceiling", async () => {
    vi.useFakeTimers({ now: 0 });
    try {
      // Not paced (0) until a refusal; the first answer is a 429, not lone (docs/rate-model.md
      // rule 7: lone after a window and 50 answers).
      const limiter = new RateLimiter({ maxConcurrency: 4, requestsPerSecond: 0 });
      (await limiter.acquire())?.refused(undefined);
      expect(limiter.takeChange()?.moved).toMatch(/^pace cut/);

      const ceiling = new RateLimiter({ maxConcurrency: 4, requestsPerSecond: 100 });
      (await ceiling.acquire())?.accepted();
      expect(ceiling.takeChange()).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it("logs a move of the learned rate at debug, with the pace and edge it moved to", async () => {
    const { url } = await serve(() => ({ status: 200, body: {} }), {
      rateLimit: { every: 2, retryAfter: "none" },
    });
    const lines: { message: string; fields?: Record<string, unknown> }[] = [];
    const logger = {
      ...silentLogger,
      debug: (message: string, fields?: Record<string, unknown>) => lines.push({ message, fields }),
    };
    const context = newRequestContext({ logger });
    const http = new HttpClient({
      baseUrl: url,
      limiter: new RateLimiter({ maxConcurrency: 1, requestsPerSecond: 50 }),
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
      context,
    });

    await http.request({ method: "GET", path: "/a" });
    await http.request({ method: "GET", path: "/b" }); // n=2 is a 429 (noise), then n=3 answers
    await http.request({ method: "GET", path: "/c" }); // n=4 is a 429 within the second: a cut

    const moves = lines.filter((line) => line.message === "learned rate moved");
    expect(moves).toHaveLength(1);
    // The second 429 ended startup: the pace cut, and the estimate learned from what was sent.
    expect(moves[0]?.fields).toMatchObject({ moved: "pace cut, edge learned" });
    expect(moves[0]?.fields?.pace).toBeLessThan(50);
    expect(moves[0]?.fields?.edge).toBeGreaterThan(moves[0]?.fields?.pace as number);
    expect(typeof moves[0]?.fields?.atMs).toBe("number");
  });

  it("lets nothing else start while a probe after a block is out", async () => {
    const limiter = new RateLimiter({ maxConcurrency: 4, requestsPerSecond: 0 });
    const first = await limiter.acquire();
    // A 429 with a long Retry-After: everyone is held, then one probe goes first.
    expect(first?.refused(2000).blocked).toBe(true);
    const waiting = [limiter.acquire(), limiter.acquire()];

    // Whichever starts first is the probe; the other waits for its answer.
    const probe = await Promise.race(waiting);
    let othersStarted = 0;
    const others = waiting.map((w) =>
      w.then((p) => {
        if (p !== probe) othersStarted++;
        return p;
      }),
    );
    await new Promise((r) => setTimeout(r, 50));
    expect(othersStarted).toBe(0);
    probe?.accepted();
    await Promise.all(others);
    expect(othersStarted).toBe(1);
  });
});
