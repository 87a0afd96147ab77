/**
 * The per-request deadline (`REQUEST_TIMEOUT`) covers headers and body: against a real socket on
 * loopback whose answer trickles in for ever, each attempt ends at the deadline, the attempts are
 * those configured, the client gives up and drops every connection, even when garbage collections
 * run during the read (with `AbortSignal.timeout` handed to fetch, a collection cut the timeout off
 * from the body, which was then read for ever).
 *
 * Whole syncs (the CLI's, against the BlackLine simulator, REQUEST_TIMEOUT 1 s) whose users list
 * trickles in for ever, stops halfway on an open connection (`stall`), or sends its headers after
 * the deadline (`slow_headers`) fail with the timeout and its variable named, exit 1, no snapshot,
 * the users list asked for once an attempt, in no less than the attempts' deadlines and no more than
 * those, the most the backoff adds and a slack (a deadline twice as long fails); headers late but
 * within the deadline give a snapshot of every user.
 */
import { getEventListeners } from "node:events";
import { access } from "node:fs/promises";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { syncToFile } from "../../lib/cli/commands/sync";
import type { CliIo } from "../../lib/cli/io";
import { exitCodeOf } from "../../lib/errors";
import {
  AbortedError,
  HttpClient,
  NetworkError,
  newRequestContext,
  RateLimiter,
  type RequestContext,
} from "../../lib/http";
import { withDeadline } from "../../lib/http/deadline";
import { type BlacklineSimulator, startBlacklineSimulator } from "../../lib/simulators/blackline";
import type { BodyBehaviour } from "../../lib/simulators/bodyBehaviour";
import { collectGarbage, loopbackServer, trickleForever, within } from "../helpers/slowAnswers";
import { readSnapshot } from "../helpers/snapshot";
import { makeTempDir } from "../helpers/tempDir";

const TIMEOUT_MS = 300;
const VARIABLE = "CONNECTOR_ACCOUNTING_REQUEST_TIMEOUT";

/**
 * A server whose answers send their headers and the start of a JSON list at once, then one space
 * (JSON whitespace) every `intervalMs` for as long as the client reads, with a full garbage
 * collection after each; it counts the requests it got and the connections the client dropped.
 */
async function trickling(intervalMs: number, onByte: (sent: number) => void = () => {}) {
  const seen = { requests: 0, closed: 0 };
  const url = await loopbackServer((_req, res) => {
    seen.requests++;
    trickleForever(res, '{"items":[', intervalMs, { byte: onByte, close: () => seen.closed++ });
  });
  return { url, seen };
}

/** A client as a connector builds it, with a short timeout (the setting's value) and fast backoff. */
function client(url: string, maxAttempts: number, timeoutMs = TIMEOUT_MS) {
  return new HttpClient({
    baseUrl: url,
    limiter: new RateLimiter({ maxConcurrency: 1, requestsPerSecond: 0 }),
    timeoutMs,
    boundVariables: { requestTimeout: VARIABLE },
    retry: { maxAttempts, baseDelayMs: 1, maxDelayMs: 5 },
  });
}

/** A GET of /users, given ten times what its attempts may take. */
function outcome(http: HttpClient, ctx: RequestContext, attempts: number): Promise<unknown> {
  return within(10 * attempts * TIMEOUT_MS, http.request({ method: "GET", path: "/users" }, ctx));
}

describe("a body that trickles in for ever", () => {
  it("is given up at the deadline of each attempt, attempts as configured, connections dropped", async () => {
    const { url, seen } = await trickling(50);
    const ctx = newRequestContext();

    const error = await outcome(client(url, 3), ctx, 3);

    expect(error).toBeInstanceOf(NetworkError);
    expect((error as Error).message).toBe(
      `GET /users got no answer: no complete answer within ${TIMEOUT_MS} ms, the per-request timeout; raise ${VARIABLE} for a slow upstream (e.g. 60s)`,
    );
    expect(ctx.counters.requests).toBe(3);
    expect(ctx.counters.retries).toBe(2);
    expect(seen.requests).toBe(3);
    await vi.waitFor(() => expect(seen.closed).toBe(3));
  });

  it("is given up at the deadline when the caller also passes a signal of its own", async () => {
    const { url, seen } = await trickling(50);
    // A long-lived signal, as the service's stop signal, that never fires.
    const ctx = newRequestContext({ signal: new AbortController().signal });

    const error = await outcome(client(url, 2), ctx, 2);

    expect(error).toBeInstanceOf(NetworkError);
    expect((error as Error).message).toMatch(/no complete answer within 300 ms/);
    expect(seen.requests).toBe(2);
    await vi.waitFor(() => expect(seen.closed).toBe(2));
  });

  it("is given up when the caller's signal fires during the body, without another attempt", async () => {
    const run = new AbortController();
    // The run is aborted a few bytes into the body.
    const { url, seen } = await trickling(50, (sent) => sent === 4 && run.abort());
    const ctx = newRequestContext({ signal: run.signal });

    // A deadline far beyond the test's guard: only the caller's signal can end this read.
    const error = await outcome(client(url, 3, 60_000), ctx, 3);

    expect(error).toBeInstanceOf(AbortedError);
    expect(seen.requests).toBe(1);
    await vi.waitFor(() => expect(seen.closed).toBe(1));
  });
});

describe("attempts sharing one caller signal", () => {
  it("add one abort listener to it however many run (Node warns of a leak past 10), and all end when it fires", async () => {
    const caller = new AbortController();
    let started = 0;
    const attempts = Array.from({ length: 20 }, () =>
      withDeadline(60_000, caller.signal, (signal) => {
        return new Promise<never>((_, reject) => {
          started++;
          signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        });
      }).catch((error: unknown) => error),
    );

    expect(started).toBe(20);
    expect(getEventListeners(caller.signal, "abort")).toHaveLength(1);
    caller.abort(new Error("stopping"));
    const outcomes = await Promise.all(attempts);

    expect(outcomes.map((e) => (e as Error).message)).toEqual(Array(20).fill("stopping"));
  });
});

describe("a body that ends within the deadline", () => {
  it("is read whole, however slowly it came", async () => {
    const url = await loopbackServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const parts = ['{"items"', ":[1,", "2]}"];
      const timer = setInterval(() => {
        const part = parts.shift();
        if (part === undefined) {
          clearInterval(timer);
          res.end();
        } else {
          res.write(part);
          collectGarbage();
        }
      }, 20);
    });
    const ctx = newRequestContext();

    // A deadline far beyond the answer's 60 ms, however busy the machine.
    const http = client(url, 1, 30_000);
    const answer = await http.request({ method: "GET", path: "/users" }, ctx);

    expect(answer.body).toEqual({ items: [1, 2] });
  });
});

/** The whole-sync cases' REQUEST_TIMEOUT, and their backoff (fast: the bound is the deadline's). */
const SYNC_TIMEOUT_MS = 1_000;
const SYNC_RETRY = { baseDelayMs: 5, maxDelayMs: 50 } as const;
/**
 * Over the attempts' deadlines and the most the backoff can add: the sync's start (config, the
 * token, the other lists) and the error's way out. Below one more REQUEST_TIMEOUT an attempt, so
 * a deadline twice as long fails on an idle machine (3 attempts: at most 3.1 s + 2 s, against 6 s).
 * Timers made late by a loaded machine are measured, not guessed: each attempt's deadline may fire
 * as late as the longest event-loop delay seen during the run (`lateTimersMs`).
 */
const SLACK_MS = 2_000;
/** Attempts of each failing sync: three, so the slack stays well below a second deadline each. */
const SYNC_ATTEMPTS = 3;
/**
 * libuv's clock, which times the deadline, counts whole milliseconds (on Linux a coarse clock of
 * 1 ms grain), so a timer can end up to about 2 ms before `performance.now()` says it should.
 */
const CLOCK_GRAIN_MS = 2;

/** A whole sync's outcome (its summary or error) and how long it took, from start to end. */
interface SyncRun {
  outcome: unknown;
  elapsedMs: number;
  /** The longest event-loop delay during the run, once an attempt: how late its timers could be. */
  lateTimersMs: number;
  out: string;
  sim: BlacklineSimulator;
}

/**
 * `sync blackline` (the CLI's sync, in this process) against a small tenant whose users list
 * answers as `body` says, with a REQUEST_TIMEOUT of 1 s, `attempts` attempts and fast backoff, and
 * garbage collections all through the run, as a long sync has them.
 */
async function syncAgainst(body: BodyBehaviour, attempts = SYNC_ATTEMPTS): Promise<SyncRun> {
  const sim = await startBlacklineSimulator({
    seed: 5,
    size: { users: 30, teams: 3, roles: 2 },
    faults: { body },
  });
  onTestFinished(() => sim.close());
  const env = {
    ...sim.env(),
    CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0",
    CONNECTOR_ACCOUNTING_REQUEST_TIMEOUT: `${SYNC_TIMEOUT_MS / 1000}s`,
  };
  const out = join(await makeTempDir(), "blackline.sync.jsonl");
  const io: CliIo = {
    stdout: { write: () => true },
    stderr: { write: () => true, isTTY: false },
    env,
  };
  const collections = setInterval(collectGarbage, 50);
  let elapsedMs = Number.NaN;
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const started = performance.now();
  const sync = syncToFile(
    io,
    env,
    { connector: "blackline", out },
    { retry: { maxAttempts: attempts, ...SYNC_RETRY } },
  ).finally(() => {
    elapsedMs = performance.now() - started;
  });
  // Only a guard against a hang: the bounds on the time are asserted on elapsedMs.
  const outcome = await within(10 * attempts * SYNC_TIMEOUT_MS, sync).finally(() =>
    clearInterval(collections),
  );
  loopDelay.disable();
  const lateTimersMs = attempts * (loopDelay.max / 1e6);
  return { outcome, elapsedMs, lateTimersMs, out, sim };
}

/**
 * The sync failed on the users list after its `SYNC_ATTEMPTS` attempts, each ended by its deadline:
 * the error names the per-request timeout and its variable, exit 1, no snapshot; and it took at
 * least the attempts' deadlines and at most those, the most the backoff can add and the slack.
 */
async function expectGivenUp({
  outcome,
  elapsedMs,
  lateTimersMs,
  out,
  sim,
}: SyncRun): Promise<void> {
  const attempts = SYNC_ATTEMPTS;
  expect(outcome).toBeInstanceOf(NetworkError);
  expect((outcome as Error).message).toMatch(
    /^GET \/v1\/users\?page=1&pageSize=\d+ got no answer: no complete answer within 1000 ms, the per-request timeout; raise CONNECTOR_ACCOUNTING_REQUEST_TIMEOUT for a slow upstream/,
  );
  expect(exitCodeOf(outcome)).toBe(1);
  expect(sim.stats.byRoute.users).toBe(attempts);
  await expect(access(out)).rejects.toThrow();
  const backoffAtMostMs = (attempts - 1) * SYNC_RETRY.maxDelayMs;
  expect(elapsedMs).toBeGreaterThanOrEqual(attempts * (SYNC_TIMEOUT_MS - CLOCK_GRAIN_MS));
  expect(elapsedMs).toBeLessThanOrEqual(
    attempts * SYNC_TIMEOUT_MS + backoffAtMostMs + SLACK_MS + lateTimersMs,
  );
}

describe("a whole sync against an upstream whose users list does not answer in time", () => {
  it("fails after the configured attempts of REQUEST_TIMEOUT each when the body trickles in for ever, naming the variable", async () => {
    await expectGivenUp(
      await syncAgainst({
        kind: "trickle",
        bytes: 1,
        intervalMs: 50,
        forever: true,
        match: "^GET /v1/users\\?",
      }),
    );
  });

  it("fails after the configured attempts of REQUEST_TIMEOUT each when the body stops halfway on an open connection", async () => {
    // Headers announcing the whole page, half of it, then silence.
    await expectGivenUp(await syncAgainst({ kind: "stall", match: "^GET /v1/users\\?" }));
  });

  it("fails after the configured attempts of REQUEST_TIMEOUT each when the headers come later than it", async () => {
    // Far beyond the deadline: only the deadline can end an attempt.
    await expectGivenUp(
      await syncAgainst({ kind: "slow_headers", delayMs: 60_000, match: "^GET /v1/users\\?" }),
    );
  });
});

describe("a whole sync against an upstream whose users list answers late but within REQUEST_TIMEOUT", () => {
  it("writes every user of the tenant", async () => {
    const { outcome, elapsedMs, out, sim } = await syncAgainst({
      kind: "slow_headers",
      delayMs: 200,
      match: "^GET /v1/users\\?",
    });

    expect(outcome).not.toBeInstanceOf(Error);
    // The one users page came after its 200 ms, at its first attempt.
    expect(sim.stats.byRoute.users).toBe(1);
    expect(elapsedMs).toBeGreaterThanOrEqual(200 - CLOCK_GRAIN_MS);
    const users = (await readSnapshot(out)).filter(
      (l) => l.kind === "resource" && l.type === "user",
    );
    expect(new Set(users.map((u) => u.id))).toEqual(
      new Set(sim.tenant.users.map((u) => String(u.id))),
    );
    expect(users).toHaveLength(sim.tenant.users.length);
  });
});
