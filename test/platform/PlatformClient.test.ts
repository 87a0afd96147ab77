import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ExitCode } from "../../lib/errors";
import { AbortedError, NetworkError } from "../../lib/http";
import {
  PlatformClient,
  PlatformCredentialsError,
  PlatformResponseError,
  PlatformStatusError,
} from "../../lib/platform";
import { clientFor, FAST_RETRY, platform } from "./helpers";

async function caught(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected the call to fail");
}

/** A platform that issues tokens and answers every other call with `answer`. */
const rawServers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  for (const server of rawServers.splice(0)) {
    server.closeAllConnections();
    server.close();
    await once(server, "close");
  }
});
async function rawPlatform(
  answer: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<string> {
  const server = createServer(async (req, res) => {
    for await (const _ of req) {
      // drain
    }
    if (req.url === "/auth/v1/token") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ access_token: "raw-token-123456", expires_in: 3600 }));
      return;
    }
    answer(req, res);
  });
  rawServers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("PlatformClient tokens", () => {
  it("fetches one token for many calls", async () => {
    const sim = await platform();
    const client = clientFor(sim);

    await client.hello({ connector: "valimail", version: "1.0.0", capabilities: ["sync"] });
    await client.setStatus("syncing");
    await client.nextTask();

    expect(sim.tokenRequests).toBe(1);
    expect(client.counters.tokenRequests).toBe(1);
  });

  it("refreshes the token once when the platform answers 401, and goes on", async () => {
    const sim = await platform();
    const client = clientFor(sim);
    await client.setStatus("syncing");

    sim.revokeTokens();
    await client.setStatus("connected");

    expect(sim.tokenRequests).toBe(2);
    expect(sim.labels.map((entry) => entry.label)).toEqual(["syncing", "connected"]);
    expect(sim.requests.filter((r) => r.route === "status").map((r) => r.outcome)).toEqual([
      200, 401, 200,
    ]);
  });

  it("fails with a credentials error (exit 3) when a fresh token is refused too", async () => {
    const sim = await platform({ tokenMaxUses: 0 });
    const client = clientFor(sim);

    const error = await caught(client.setStatus("syncing"));

    expect(error).toBeInstanceOf(PlatformCredentialsError);
    expect((error as PlatformCredentialsError).exitCode).toBe(ExitCode.credentialsRejected);
    expect(error.message).toMatch(
      /^the platform rejected the credentials CONNECTOR_CLIENT_ID\/CONNECTOR_CLIENT_SECRET \(POST \/connector\/v1\/status answered 401: invalid_token/,
    );
    expect(sim.tokenRequests).toBe(2);
    expect(sim.labels).toEqual([]);
  });

  it("does not retry a token request the platform refuses as invalid_client", async () => {
    const sim = await platform();
    const client = clientFor(sim, { clientSecret: "wrong-secret-value-91" });

    const error = await caught(
      client.hello({ connector: "blackline", version: "1", capabilities: [] }),
    );

    expect(PlatformCredentialsError.is(error)).toBe(true);
    expect(error.message).toContain("POST /auth/v1/token answered 401: invalid_client");
    expect(sim.tokenRequests).toBe(1);
    expect(sim.hellos).toEqual([]);
  });

  it("retries the token request through a dropped connection and a 500", async () => {
    const sim = await platform();
    sim.failNext("token", 1, "drop");
    sim.failNext("token", 1, "status500");
    const client = clientFor(sim);

    await client.setStatus("syncing");

    expect(sim.requests.filter((r) => r.route === "token").map((r) => r.outcome)).toEqual([
      "dropped",
      500,
      200,
    ]);
    expect(client.counters.retries).toBe(2);
  });
});

describe("PlatformClient calls", () => {
  it("announces the host and reads the poll interval", async () => {
    const sim = await platform({ pollIntervalSeconds: 7 });
    const client = clientFor(sim);

    const answer = await client.hello({
      connector: "valimail",
      version: "0.1.0",
      capabilities: ["sync", "disable_user"],
    });

    expect(answer).toEqual({ pollIntervalSeconds: 7 });
    expect(sim.hellos).toEqual([
      expect.objectContaining({
        hostId: "host-a",
        connector: "valimail",
        version: "0.1.0",
        capabilities: ["sync", "disable_user"],
      }),
    ]);
  });

  it("round-trips the task queue: each task handed out once, heartbeats and outcomes recorded", async () => {
    const sim = await platform();
    const request = {
      requestId: "r-1",
      connectorId: "valimail-prod",
      action: "disable_user",
      args: { user_id: "49c398b12b" },
    };
    const syncId = sim.enqueueTask({ type: "sync" });
    const actionId = sim.enqueueTask({ id: "t-action", type: "action", request });
    const client = clientFor(sim);

    const first = await client.nextTask();
    const second = await client.nextTask();
    const third = await client.nextTask();
    await client.heartbeat(syncId);
    await client.heartbeat(syncId);
    await client.finishTask(syncId, { status: "succeeded" });
    const reply = { user_id: "49c398b12b", active: false, changed: true };
    await client.finishTask(actionId, { status: "succeeded", result: reply });
    await client.finishTask(actionId, { status: "succeeded", result: reply });

    expect(first).toEqual({ id: "task-1", type: "sync" });
    expect(second).toEqual({ id: "t-action", type: "action", request });
    expect(third).toBeNull();
    expect(sim.pendingTasks).toEqual([]);
    expect(sim.heartbeats.get(syncId)).toBe(2);
    expect(
      sim.finishedTasks.map(({ id, status, result, error }) => ({ id, status, result, error })),
    ).toEqual([
      { id: "task-1", status: "succeeded", result: undefined, error: undefined },
      { id: "t-action", status: "succeeded", result: reply, error: undefined },
    ]);
  });

  it("records a failed task's error", async () => {
    const sim = await platform();
    const id = sim.enqueueTask({ type: "action", request: {} });
    const client = clientFor(sim);
    await client.nextTask();
    const error = { code: "invalid_request", message: "action is missing", retryable: false };

    await client.finishTask(id, { status: "failed", error });

    expect(sim.finishedTasks[0]).toMatchObject({ id, status: "failed", error });
  });

  it("fails precisely on a task the platform never handed out", async () => {
    const sim = await platform();
    const client = clientFor(sim);

    const error = await caught(client.heartbeat("nope"));

    expect(PlatformStatusError.is(error) && error.status).toBe(404);
    expect(error.message).toBe(
      "POST /connector/v1/tasks/nope/heartbeat answered 404: unknown_task: no task nope was handed out",
    );
  });

  it("keeps the label history with details", async () => {
    const sim = await platform();
    const client = clientFor(sim);

    await client.setStatus("syncing");
    await client.setStatus("connected");
    await client.setStatus("syncing");
    await client.setStatus("error", "BlackLine rejected the credentials; check the client secret");

    expect(sim.labels.map(({ label, detail }) => ({ label, detail }))).toEqual([
      { label: "syncing", detail: undefined },
      { label: "connected", detail: undefined },
      { label: "syncing", detail: undefined },
      { label: "error", detail: "BlackLine rejected the credentials; check the client secret" },
    ]);
    expect(sim.labels.every((entry) => !Number.isNaN(Date.parse(entry.at)))).toBe(true);
  });
});

describe("PlatformClient retries", () => {
  it("retries a call through 500, 429 and a dropped connection", async () => {
    const sim = await platform();
    sim.failNext("status", 1, "status500");
    sim.failNext("status", 1, "status429", { retryAfterSeconds: 0 });
    sim.failNext("status", 1, "drop");
    const client = clientFor(sim, { retry: { ...FAST_RETRY, attempts: 4 } });

    await client.setStatus("connected");

    expect(sim.requests.filter((r) => r.route === "status").map((r) => r.outcome)).toEqual([
      500,
      429,
      "dropped",
      200,
    ]);
    expect(sim.labels).toHaveLength(1);
  });

  it("gives up after the configured attempts with the last status", async () => {
    const sim = await platform();
    sim.failNext("hello", 5, "status500");
    const client = clientFor(sim, { retry: { ...FAST_RETRY, attempts: 3 } });

    const error = await caught(client.hello({ connector: "x", version: "1", capabilities: [] }));

    expect(PlatformStatusError.is(error) && error.status).toBe(500);
    expect(error.message).toBe("POST /connector/v1/hello answered 500: simulated_fault");
    expect(sim.count("hello")).toBe(3);
  });

  it("counts each 429 as an attempt, and gives up with the 429 for the service to wait", async () => {
    const sim = await platform();
    sim.failNext("status", 5, "status429", { retryAfterSeconds: 0 });
    const client = clientFor(sim, { retry: { ...FAST_RETRY, attempts: 3 } });

    const error = await caught(client.setStatus("connected"));

    expect(PlatformStatusError.is(error) && error.status).toBe(429);
    expect(sim.count("status")).toBe(3);
  });

  it("does not sleep on a Retry-After longer than maxRetryAfterMs: fails at once with it", async () => {
    const sim = await platform();
    sim.failNext("hello", 1, "status429", { retryAfterSeconds: 600 });
    const client = clientFor(sim, { retry: { ...FAST_RETRY, maxRetryAfterMs: 120_000 } });

    const error = await caught(client.hello({ connector: "x", version: "1", capabilities: [] }));

    expect(PlatformStatusError.is(error) && error.status).toBe(429);
    expect(PlatformStatusError.is(error) && error.retryAfterMs).toBe(600_000);
    expect(sim.count("hello")).toBe(1);
  });

  it("retries a call that outlives its timeout; the abandoned attempt changes nothing", async () => {
    const sim = await platform();
    const id = sim.enqueueTask({ type: "sync" });
    sim.failNext("nextTask", 1, "slow", { delayMs: 1_500 });
    const client = clientFor(sim, { timeoutMs: 200 });

    const task = await client.nextTask();
    // The slow attempt wakes up after the client has left: it must hand out nothing.
    await expect
      .poll(() => sim.requests.filter((r) => r.route === "nextTask").map((r) => r.outcome), {
        timeout: 5_000,
      })
      .toEqual(["dropped", 200]);

    expect(task).toEqual({ id, type: "sync" });
    expect(sim.handedOut).toEqual([{ id, type: "sync" }]);
    expect(sim.pendingTasks).toEqual([]);
  });

  it("fails with NetworkError when nothing answers", async () => {
    const sim = await platform();
    const url = sim.url;
    await sim.close();
    const client = new PlatformClient({
      baseUrl: url,
      clientId: "id",
      clientSecret: "nobody-listens-secret",
      hostId: "h",
      retry: { ...FAST_RETRY, attempts: 2 },
    });

    const error = await caught(client.nextTask());

    expect(NetworkError.is(error)).toBe(true);
    expect(error.message).toMatch(/^POST \/auth\/v1\/token got no answer: ECONNREFUSED/);
    expect(client.counters.requests).toBe(2);
  });

  it("stops waiting when the caller aborts", async () => {
    const sim = await platform();
    const client = clientFor(sim, {
      retry: { attempts: 5, baseDelayMs: 60_000, maxDelayMs: 60_000 },
    });
    const controller = new AbortController();
    await client.setStatus("syncing"); // the token is fetched: the next call goes straight to status
    sim.failNext("status", 3, "status500");

    const pending = client.setStatus("connected", undefined, { signal: controller.signal });
    await expect.poll(() => sim.count("status")).toBeGreaterThanOrEqual(2);
    controller.abort();
    const error = await caught(pending);

    expect(AbortedError.is(error)).toBe(true);
    expect(error.message).toBe("POST /connector/v1/status was abandoned: the call was aborted");
  });

  it("does not start a call whose signal has already fired", async () => {
    const sim = await platform();
    const client = clientFor(sim);

    const error = await caught(client.nextTask({ signal: AbortSignal.abort() }));

    expect(AbortedError.is(error)).toBe(true);
    expect(sim.requests).toEqual([]);
  });
});

describe("PlatformClient answers", () => {
  it("refuses an answer that is not JSON", async () => {
    const url = await rawPlatform((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html>maintenance</html>");
    });
    const client = new PlatformClient({
      baseUrl: url,
      clientId: "id",
      clientSecret: "raw-secret-abc",
      hostId: "h",
    });

    const error = await caught(client.hello({ connector: "x", version: "1", capabilities: [] }));

    expect(PlatformResponseError.is(error)).toBe(true);
    expect(error.message).toBe(
      "POST /connector/v1/hello: the platform answered 200 with a body that is not JSON (text/html, 24 characters)",
    );
  });

  it("names the field of an answer that does not fit the protocol", async () => {
    const url = await rawPlatform((req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        req.url?.endsWith("/hello")
          ? JSON.stringify({ pollIntervalSeconds: "soon" })
          : JSON.stringify({ task: { id: "t1", type: "reboot" } }),
      );
    });
    const client = new PlatformClient({
      baseUrl: url,
      clientId: "id",
      clientSecret: "raw-secret-abc",
      hostId: "h",
    });

    const hello = await caught(client.hello({ connector: "x", version: "1", capabilities: [] }));
    const task = await caught(client.nextTask());

    expect(hello.message).toBe(
      "POST /connector/v1/hello: the platform's answer does not fit the protocol (pollIntervalSeconds: Invalid input: expected number, received string)",
    );
    expect(PlatformResponseError.is(task)).toBe(true);
    expect(task.message).toMatch(/^POST \/connector\/v1\/tasks\/next: .*\(task\.type: /);
  });
});

describe("PlatformClient secrets", () => {
  it("never puts the client secret or a token in an error", async () => {
    const secret = "s3cr3t-platform-value-XYZ";
    const sim = await platform({ clientSecret: secret });
    const client = clientFor(sim);
    const wrong = clientFor(sim, { clientSecret: `${secret}-old` });
    await client.setStatus("syncing");
    sim.failNext("status", 9, "status500");

    const errors = [
      await caught(client.setStatus("connected")),
      await caught(wrong.setStatus("connected")),
      await caught(client.heartbeat("missing")),
    ];

    const tokens = sim.issuedTokens();
    expect(tokens).toHaveLength(1);
    for (const error of errors) {
      const text = [error.message, error.stack, String(error), JSON.stringify(error)].join("\n");
      expect(text).not.toContain(secret);
      for (const token of tokens) expect(text).not.toContain(token);
    }
    expect(errors.map((error) => error.name)).toEqual([
      "PlatformStatusError",
      "PlatformCredentialsError",
      "PlatformStatusError",
    ]);
  });
});
