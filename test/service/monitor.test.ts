import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "vitest";
import { SHUTDOWN_DEADLINE_MS } from "../../lib/service";
import { type BlacklineSimulator, startBlacklineSimulator } from "../../lib/simulators/blackline";
import { startValimailSimulator } from "../../lib/simulators/valimail";
import { cli } from "../helpers/cli";
import { valimailEnv } from "../helpers/valimail";
import { forwardPort, freePort, type ServiceProcess, scenario, waitFor } from "./harness";
import { type PromFamily, parsePromText } from "./promText";

/** The service's endpoint (it was given port 0: any), from the line it logs once started. */
async function endpointOf(service: ServiceProcess): Promise<string> {
  const line = await waitFor("the service's start", () => service.logged("service started")[0]);
  return line.monitoringUrl as string;
}

/** Every answer the test received, to search for secrets and user ids at the end. */
const bodies: string[] = [];

async function get(url: string, init?: RequestInit) {
  const response = await fetch(url, init);
  const body = await response.text();
  bodies.push(body, JSON.stringify([...response.headers]));
  return { status: response.status, headers: response.headers, body };
}

const getJson = async (url: string) => {
  const { status, body } = await get(url);
  return { status, json: JSON.parse(body) as Record<string, unknown> };
};

/** The value of the sample of `name` with these labels (among others), if there is one. */
function sampleValue(
  families: Map<string, PromFamily>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const samples = [...families.values()].flatMap((family) => family.samples);
  return samples.find(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  )?.value;
}

describe.concurrent("the service's monitoring endpoint and state directory lock (built executable)", () => {
  test("readyz 503 until the platform and the upstream were reached, 200 after the first sync, 503 naming credentials the upstream refuses; metrics count the syncs, uploads, tasks and actions run; status lists them; no secret or user id in any answer; 404, 405; the listener closes on SIGTERM", async (context) => {
    const { expect } = context;
    const { platform, stateDir, start, closeLater } = await scenario(context);
    const upstream = await startValimailSimulator({ users: 30 });
    closeLater(() => upstream.close());
    const appIdFile = join(stateDir, "app-id");
    const { CONNECTOR_EMAILAUTH_APP_ID: appId = "", ...env }: Record<string, string> =
      valimailEnv(upstream);
    await writeFile(appIdFile, `${appId}\n`);
    // The platform is away at first: nothing reached yet.
    const platformPort = await freePort();
    const startedAt = Date.now();
    const service = start(["valimail"], {
      ...env,
      CONNECTOR_EMAILAUTH_APP_ID_FILE: appIdFile,
      CONNECTOR_PROVISIONING: "true",
      CONNECTOR_PLATFORM_URL: `http://127.0.0.1:${platformPort}`,
      CONNECTOR_SYNC_INTERVAL: "1h",
      CONNECTOR_HTTP_PORT: "0",
    });
    const url = await endpointOf(service);

    const before = await getJson(`${url}/readyz`);
    expect(before.status).toBe(503);
    expect(before.json.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ check: "platform", reason: "not_reached_yet" }),
        expect.objectContaining({ check: "upstream", reason: "not_reached_yet" }),
      ]),
    );
    expect((await getJson(`${url}/livez`)).status).toBe(200);

    const proxy = await forwardPort(platformPort, platform);
    closeLater(() => proxy.close());
    await waitFor("readyz 200", async () => (await get(`${url}/readyz`)).status === 200);
    expect(platform.uploads.size).toBe(1);
    const requestsOfFirstSync = upstream.stats.requests;

    // An action (not a sync: its requests are no sync's), then a sync on demand.
    const [userId] = [...upstream.users.keys()];
    platform.enqueueTask({
      type: "action",
      request: {
        requestId: "r-1",
        connectorId: "host-1",
        action: "disable_user",
        args: { user_id: userId },
      },
    });
    await waitFor("the action's finish", () => platform.finishedTasks.length === 1);
    const requestsOfAction = upstream.stats.requests - requestsOfFirstSync;
    platform.enqueueTask({ type: "sync" });
    await waitFor("the sync task's finish", () => platform.finishedTasks.length === 2);
    expect(platform.uploads.size).toBe(2);

    // The upstream refuses the credentials (a rotated file read before the sync): not ready, saying why.
    await writeFile(appIdFile, "an-outdated-app-id\n");
    platform.enqueueTask({ type: "sync" });
    await waitFor("the failed sync's finish", () => platform.finishedTasks.length === 3);
    const refused = await getJson(`${url}/readyz`);
    expect(refused.status).toBe(503);
    expect(refused.json).toMatchObject({
      ready: false,
      problems: [{ check: "upstream", reason: "credentials_rejected" }],
    });
    expect(JSON.stringify(refused.json)).toMatch(/rejected the credentials/);

    // Metrics, read by a parser that is not prom-client, and line by line.
    const metrics = await get(`${url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const families = parsePromText(metrics.body);
    for (const family of families.values()) {
      for (const sample of family.samples) {
        expect(sample.labels, sample.name).toMatchObject({
          connector: "valimail",
          host_id: "host-1",
        });
      }
    }
    const m = (name: string, labels?: Record<string, string>) =>
      sampleValue(families, `access_connectors_${name}`, labels);
    expect(m("syncs_total", { outcome: "uploaded", trigger: "schedule" })).toBe(1);
    expect(m("syncs_total", { outcome: "uploaded", trigger: "task" })).toBe(1);
    expect(m("syncs_total", { outcome: "error", trigger: "task" })).toBe(1);
    expect(m("syncs_total", { outcome: "held", trigger: "task" })).toBe(0);
    expect(m("uploads_total")).toBe(2);
    const uploadedBytes = [...platform.uploads.values()].reduce((sum, u) => sum + u.bytes, 0);
    expect(m("upload_bytes_total")).toBe(uploadedBytes);
    // The syncs' requests by how they ended: all answered 200 but the /auth the refused app id
    // was answered 400 (the simulator's answer); no rate learned from an unlimited upstream.
    const byStatus = families.get("access_connectors_upstream_requests_total")?.samples ?? [];
    const sent = upstream.stats.requests - requestsOfAction;
    expect(byStatus.reduce((sum, s) => sum + s.value, 0)).toBe(sent);
    expect(Object.fromEntries(byStatus.map((s) => [s.labels.status, s.value]))).toEqual({
      200: sent - 1,
      400: 1,
    });
    expect(m("upstream_learned_rate")).toBe(0);
    expect(m("tasks_total", { type: "sync", outcome: "succeeded" })).toBe(1);
    expect(m("tasks_total", { type: "sync", outcome: "failed" })).toBe(1);
    expect(m("tasks_total", { type: "action", outcome: "succeeded" })).toBe(1);
    expect(m("actions_total", { action: "disable_user", outcome: "succeeded" })).toBe(1);
    expect(m("ready")).toBe(0);
    const lastSuccess = m("last_successful_sync_timestamp_seconds") ?? 0;
    expect(lastSuccess * 1000).toBeGreaterThan(startedAt);
    expect(lastSuccess * 1000).toBeLessThanOrEqual(Date.now());
    const duration = families.get("access_connectors_sync_duration_seconds");
    expect(duration?.type).toBe("histogram");
    const durationCounts = duration?.samples.filter((x) => x.name.endsWith("_count"));
    expect(durationCounts?.reduce((sum, x) => sum + x.value, 0)).toBe(3);
    expect(m("sync_duration_seconds_bucket", { outcome: "error", le: "+Inf" })).toBe(1);
    expect([...families.keys()]).toEqual(
      expect.arrayContaining(["process_cpu_user_seconds_total", "nodejs_eventloop_lag_seconds"]),
    );

    // Status: the three syncs, newest first, with counts and the reason.
    const status = await getJson(`${url}/status`);
    expect(status.status).toBe(200);
    const syncs = status.json.syncs as Record<string, unknown>[];
    expect(syncs.map((s) => [s.outcome, s.trigger])).toEqual([
      ["error", "task"],
      ["uploaded", "task"],
      ["uploaded", "schedule"],
    ]);
    expect(syncs[0]).toMatchObject({ failure: "credentials_rejected" });
    const lastUpload = [...platform.uploads.values()][1];
    const syncEnd = JSON.parse(lastUpload?.text?.trim().split("\n").at(-1) ?? "{}");
    expect(syncs[1]).toMatchObject({ syncId: lastUpload?.syncId, counts: syncEnd.counts });
    expect(m("snapshot_records", { kind: "grant" })).toBe(syncEnd.counts.grant);
    expect(status.json).toMatchObject({ connector: "valimail", hostId: "host-1", held: null });

    // The command prints it.
    const printed = await cli(["status", "--service", "--url", url], {});
    expect(printed.code).toBe(0);
    expect(printed.stdout).toContain("not ready: upstream credentials_rejected");
    expect(printed.stdout).toMatch(/uploaded \(schedule, [\d.]+ s\)/);

    // Nothing else is served.
    const missing = await get(`${url}/health`);
    expect(missing.status).toBe(404);
    const posted = await get(`${url}/metrics`, { method: "POST", body: "x" });
    expect(posted.status).toBe(405);
    expect(posted.headers.get("allow")).toBe("GET, HEAD");

    // No secret, token or user id in any answer.
    const everything = [...bodies, printed.stdout].join("\n");
    const secrets = [
      appId,
      "an-outdated-app-id",
      env.CONNECTOR_EMAILAUTH_CLIENT_ID ?? "",
      platform.credentials.clientSecret,
      ...platform.issuedTokens(),
    ];
    for (const secret of secrets) expect(everything).not.toContain(secret);
    for (const id of upstream.users.keys()) {
      // An id of digits only could be part of a number: look for it as a value there.
      if (/[a-f]/.test(id)) expect(everything).not.toContain(id);
      else expect(everything).not.toMatch(new RegExp(`["=]${id}"`));
    }

    const stop = await service.stop("SIGTERM");
    expect(stop.code).toBe(0);
    expect(stop.ms).toBeLessThan(SHUTDOWN_DEADLINE_MS);
    const closed = service.lines.findIndex((l) => l.message === "monitoring endpoint closed");
    expect(closed).toBeGreaterThan(-1);
    expect(closed).toBeLessThan(service.lines.findIndex((l) => l.message === "service stopped"));
    await expect(fetch(`${url}/livez`)).rejects.toThrow();
  });

  test("a snapshot the removal guard holds: /status shows it with its counts and the release command, /metrics counts the hold; release --service uploads it (counted) and /status holds nothing", async (context) => {
    const { expect } = context;
    const { platform, stateDir, start, closeLater } = await scenario(context);
    const size = { teams: 8, roles: 3 };
    const full = await startBlacklineSimulator({ seed: 5, size: { users: 90, ...size } });
    const shrunk = await startBlacklineSimulator({ seed: 5, size: { users: 50, ...size } });
    closeLater(() => Promise.all([full.close(), shrunk.close()]));
    const envFile = join(stateDir, "upstream.env");
    // The first upstream allows 20 requests per 10 s window and says so in RateLimit headers,
    // which the client learns (not paced until then: REQUESTS_PER_SECOND 0) once 10 of its 14
    // requests are counted: 2 a second.
    full.faults = {
      limiter: { kind: "fixed_window", limit: 20, windowSeconds: 10, headers: "ratelimit" },
    };
    const envText = (sim: BlacklineSimulator) =>
      Object.entries({ ...sim.env(), CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0" })
        .map(([name, value]) => `${name}=${value}\n`)
        .join("");
    await writeFile(envFile, envText(full));
    const service = start(["blackline", "--env-file", envFile], {
      CONNECTOR_SYNC_INTERVAL: "1h",
      CONNECTOR_HTTP_PORT: "0",
    });
    const url = await endpointOf(service);
    const first = await waitFor("the first sync's end in /metrics", async () => {
      const families = parsePromText((await get(`${url}/metrics`)).body);
      const syncs = sampleValue(families, "access_connectors_syncs_total", {
        outcome: "uploaded",
        trigger: "schedule",
      });
      return syncs === 1 ? families : undefined;
    });
    const byStatus = Object.fromEntries(
      (first.get("access_connectors_upstream_requests_total")?.samples ?? []).map((s) => [
        s.labels.status,
        s.value,
      ]),
    );
    // The simulator's answers: 14 requests in all, so none refused; the rate, from the headers
    // (20 per window of the longest Reset seen, 10 s, or 9 s on a slow start).
    expect(full.stats.throttled).toBe(0);
    expect(byStatus).toEqual({ 200: full.stats.requests });
    const learned = sampleValue(first, "access_connectors_upstream_learned_rate") ?? 0;
    expect(learned).toBeGreaterThanOrEqual(2);
    expect(learned).toBeLessThanOrEqual(20 / 9);
    await writeFile(envFile, envText(shrunk));
    platform.enqueueTask({ type: "sync" });
    await waitFor("the held sync's finish", () => platform.finishedTasks.length === 1);

    const held = await getJson(`${url}/status`);
    const syncs = held.json.syncs as Record<string, unknown>[];
    expect(syncs[0]).toMatchObject({
      outcome: "held",
      trigger: "task",
      counts: { resource: expect.any(Number) },
    });
    expect(syncs[0]?.reason).toMatch(
      /^The new snapshot was held, not uploaded: it removes 40 of 90 users/,
    );
    expect(held.json.held).toEqual({
      syncId: syncs[0]?.syncId,
      users: 50,
      grants: expect.any(Number),
      release: "access-connectors release --service",
    });
    const before = parsePromText((await get(`${url}/metrics`)).body);
    expect(sampleValue(before, "access_connectors_removal_guard_holds_total")).toBe(1);
    expect(
      sampleValue(before, "access_connectors_syncs_total", { outcome: "held", trigger: "task" }),
    ).toBe(1);
    expect(sampleValue(before, "access_connectors_uploads_total")).toBe(1);

    const release = await cli(["release", "--service"], { CONNECTOR_STATE_DIR: stateDir });
    expect(release.code).toBe(0);
    await waitFor(
      "no snapshot held",
      async () => (await getJson(`${url}/status`)).json.held === null,
    );
    const after = parsePromText((await get(`${url}/metrics`)).body);
    expect(sampleValue(after, "access_connectors_uploads_total")).toBe(2);
    const uploadedAt = sampleValue(after, "access_connectors_last_upload_timestamp_seconds") ?? 0;
    const syncedAt =
      sampleValue(after, "access_connectors_last_successful_sync_timestamp_seconds") ?? 0;
    expect(uploadedAt).toBeGreaterThan(syncedAt);
    expect((await service.stop()).code).toBe(0);
  });

  test("one service per state directory: a second exits 2 naming the directory and the first; after kill -9 of the first, a new one starts", async (context) => {
    const { expect } = context;
    const { stateDir, start, closeLater } = await scenario(context);
    const upstream = await startValimailSimulator({ users: 5 });
    closeLater(() => upstream.close());
    const env = {
      ...valimailEnv(upstream),
      CONNECTOR_SYNC_INTERVAL: "1h",
      CONNECTOR_HTTP_PORT: "0",
    };
    const first = start(["valimail"], env);
    await endpointOf(first);

    const second = start(["valimail"], env);
    const refused = await second.exited;
    expect(refused.code).toBe(2);
    expect(second.stderr).toContain(
      `CONNECTOR_STATE_DIR: ${stateDir} is in use by the service with pid ${first.child.pid} and host id host-1`,
    );
    expect(second.logged("service started")).toHaveLength(0);

    first.child.kill("SIGKILL");
    await first.exited;
    const third = start(["valimail"], env);
    const url = await endpointOf(third);
    expect((await fetch(`${url}/livez`)).status).toBe(200);
    expect((await third.stop()).code).toBe(0);
  });
});
