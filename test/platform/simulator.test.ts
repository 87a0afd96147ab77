/** The platform simulator follows docs/platform-protocol.md: checked with plain fetch, no client code. */
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { loadPlatformConfig } from "../../lib/platform";
import type { PlatformSimulator } from "../../lib/simulators/platform";
import { platform } from "./helpers";

async function tokenFor(sim: PlatformSimulator): Promise<string> {
  const response = await fetch(`${sim.url}/auth/v1/token`, {
    method: "POST",
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: sim.credentials.clientId,
      client_secret: sim.credentials.clientSecret,
    }),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { access_token: string; expires_in: number };
  expect(body.expires_in).toBe(3600);
  return body.access_token;
}

async function call(
  sim: PlatformSimulator,
  path: string,
  init: {
    method?: string;
    token?: string;
    json?: unknown;
    body?: Buffer;
    headers?: Record<string, string>;
  },
) {
  const response = await fetch(`${sim.url}${path}`, {
    method: init.method ?? "POST",
    headers: {
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      ...(init.json === undefined ? {} : { "content-type": "application/json" }),
      ...init.headers,
    },
    body: init.body ?? (init.json === undefined ? undefined : JSON.stringify(init.json)),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("platform simulator", () => {
  it("issues tokens only to its client, as an OAuth server answers", async () => {
    const sim = await platform();

    const wrong = await fetch(`${sim.url}/auth/v1/token`, {
      method: "POST",
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: sim.credentials.clientId,
        client_secret: "not-it",
      }),
    });
    const grant = await fetch(`${sim.url}/auth/v1/token`, {
      method: "POST",
      body: new URLSearchParams({ grant_type: "password" }),
    });

    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: "invalid_client" });
    expect(grant.status).toBe(400);
    expect(await grant.json()).toMatchObject({ error: "unsupported_grant_type" });
    expect(sim.tokenRequests).toBe(2);
    expect(sim.tokensIssued).toBe(0);
  });

  it("checks the bearer token on every /connector call", async () => {
    const sim = await platform();
    const token = await tokenFor(sim);

    const anonymous = await call(sim, "/connector/v1/status", { json: { label: "syncing" } });
    const forged = await call(sim, "/connector/v1/status", {
      token: "forged",
      json: { label: "syncing" },
    });
    const allowed = await call(sim, "/connector/v1/status", { token, json: { label: "syncing" } });
    sim.revokeTokens();
    const revoked = await call(sim, "/connector/v1/tasks/next", { token, json: { hostId: "h" } });

    expect([anonymous.status, forged.status, allowed.status, revoked.status]).toEqual([
      401, 401, 200, 401,
    ]);
    expect(anonymous.body).toMatchObject({ error: "invalid_token" });
    expect(sim.labels).toHaveLength(1);
  });

  it("refuses malformed bodies and unknown routes", async () => {
    const sim = await platform();
    const token = await tokenFor(sim);

    const label = await call(sim, "/connector/v1/status", { token, json: { label: "busy" } });
    const hello = await call(sim, "/connector/v1/hello", { token, json: { hostId: "h" } });
    const unknown = await call(sim, "/connector/v2/anything", { token, json: {} });
    const method = await call(sim, "/connector/v1/hello", { method: "PUT", token, json: {} });

    expect(label.status).toBe(400);
    expect(label.body).toMatchObject({ error: "invalid_request" });
    expect(String(label.body.message)).toMatch(/^label: /);
    expect(hello.status).toBe(400);
    expect(unknown.status).toBe(404);
    expect(method.status).toBe(405);
  });

  it("verifies the upload's x-content-sha256 against the body received", async () => {
    const sim = await platform();
    const token = await tokenFor(sim);
    const body = gzipSync(Buffer.from('{"kind":"sync_start"}\n'));
    const sha = createHash("sha256").update(body).digest("hex");
    const put = (headers: Record<string, string>) =>
      call(sim, "/connector/v1/syncs/s1/snapshot", { method: "PUT", token, body, headers });

    const missing = await put({});
    const mismatch = await put({ "x-content-sha256": "0".repeat(64) });
    const good = await put({ "x-content-sha256": sha.toUpperCase() });

    expect(missing).toMatchObject({ status: 400, body: { error: "missing_checksum" } });
    expect(mismatch).toMatchObject({ status: 400, body: { error: "checksum_mismatch" } });
    expect(good).toEqual({ status: 200, body: { syncId: "s1", bytes: body.length, sha256: sha } });
    expect(sim.uploads.get("s1")).toMatchObject({
      received: 3,
      accepted: 1,
      rejected: 2,
      text: '{"kind":"sync_start"}\n',
    });
  });

  it("hands each task out once, in order, and refuses to finish one it never handed out", async () => {
    const sim = await platform();
    const token = await tokenFor(sim);
    sim.enqueueTask({ type: "sync" });
    sim.enqueueTask({ type: "action", request: { action: "enable_user" } });
    const next = () => call(sim, "/connector/v1/tasks/next", { token, json: { hostId: "h" } });

    const answers = [await next(), await next(), await next()];
    const stray = await call(sim, "/connector/v1/tasks/task-9/finish", {
      token,
      json: { status: "succeeded" },
    });

    expect(answers.map((a) => a.body)).toEqual([
      { task: { id: "task-1", type: "sync" } },
      { task: { id: "task-2", type: "action", request: { action: "enable_user" } } },
      { task: null },
    ]);
    expect(stray.status).toBe(404);
    expect(() => sim.enqueueTask({ id: "task-1", type: "sync" })).toThrow(/already queued/);
  });

  it("applies queued faults in order, per route, and counts them", async () => {
    const sim = await platform();
    const token = await tokenFor(sim);
    sim.failNext("status", 2, "status500");
    sim.failNext("status", 1, "status429", { retryAfterSeconds: 3 });
    const label = () =>
      fetch(`${sim.url}/connector/v1/status`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
        body: JSON.stringify({ label: "connected" }),
      });

    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 4; i++) {
      const response = await label();
      statuses.push(response.status);
      retryAfter ??= response.headers.get("retry-after");
      await response.text();
    }

    expect(statuses).toEqual([500, 500, 429, 200]);
    expect(retryAfter).toBe("3");
    expect(sim.labels).toHaveLength(1);
    expect(sim.count("status")).toBe(4);
  });

  it("gives the variables that point a connector at it", async () => {
    const sim = await platform();

    const config = loadPlatformConfig(sim.env("host-9"));

    expect(config).toMatchObject({ platformUrl: sim.url, hostId: "host-9" });
    expect(config.clientSecret).toBe(sim.credentials.clientSecret);
  });
});
