import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, type ExpectStatic, test } from "vitest";
import { startBlacklineSimulator } from "../../lib/simulators/blackline";
import { startValimailSimulator } from "../../lib/simulators/valimail";
import packageJson from "../../package.json" with { type: "json" };
import { cli } from "../helpers/cli";
import { canonicalRecords, type Line, readSnapshot } from "../helpers/snapshot";
import { valimailEnv } from "../helpers/valimail";
import {
  filesBelow,
  forwardPort,
  freePort,
  type ServiceProcess,
  scenario,
  waitFor,
} from "./harness";

/** The records of an uploaded snapshot's text. */
function linesOf(text: string | undefined): Line[] {
  return (text ?? "")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Line);
}

/** No request limit, so the scenarios spend their time on what they test. */
const FAST_BLACKLINE = { CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0" };

/** Every log line has the Lambdas' fields, and stdout holds nothing else. */
function expectJsonLogs(service: ServiceProcess, expect: ExpectStatic) {
  expect(service.strayLines).toEqual([]);
  for (const line of service.lines) {
    expect(line).toMatchObject({
      level: expect.stringMatching(/^(DEBUG|INFO|WARN|ERROR)$/),
      message: expect.any(String),
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      service: "access-connectors",
    });
  }
}

// Each scenario has its own simulators, state directory and child process: they run at once.
describe.concurrent("access-connectors service (the built executable, as the container runs it)", () => {
  test("configuration errors exit 2 at start and name the variable; nothing is sent", async (context) => {
    const { expect } = context;
    const { platform, stateDir, start } = await scenario(context);
    const secretFile = join(stateDir, "client-secret");
    await writeFile(secretFile, `${platform.credentials.clientSecret}\n`);
    const upstreamVariables = {
      CONNECTOR_ACCOUNTING_BASE_URL: "http://127.0.0.1:9",
      CONNECTOR_ACCOUNTING_CLIENT_ID: "id",
      CONNECTOR_ACCOUNTING_CLIENT_SECRET: "a-client-secret",
      CONNECTOR_ACCOUNTING_USERNAME: "user",
      CONNECTOR_ACCOUNTING_API_KEY: "an-api-key",
      CONNECTOR_ACCOUNTING_SCOPE: "DataIngestionAPI instance_3f2504e0-4f89-11d3-9a0c-0305e82c3301",
    };

    const both = start(["blackline"], {
      ...upstreamVariables,
      CONNECTOR_CLIENT_SECRET_FILE: secretFile,
    });
    const missing = start(["blackline"], {
      CONNECTOR_HOST_ID: "",
      CONNECTOR_SYNC_INTERVAL: "every hour",
    });
    const noConnector = start([], {});

    expect((await both.exited).code).toBe(2);
    expect(both.stderr).toContain(
      "both CONNECTOR_CLIENT_SECRET and CONNECTOR_CLIENT_SECRET_FILE are set",
    );
    expect((await missing.exited).code).toBe(2);
    expect(missing.stderr).toContain("CONNECTOR_HOST_ID: is not set");
    expect(missing.stderr).toContain('CONNECTOR_SYNC_INTERVAL: "every hour" is not an interval');
    expect(missing.stderr).toContain("CONNECTOR_ACCOUNTING_CLIENT_ID: is not set");
    expect(missing.logged("the service cannot start")).toHaveLength(1);
    expectJsonLogs(missing, expect);
    expect((await noConnector.exited).code).toBe(2);
    expect(noConnector.stderr).toMatch(/CONNECTOR_NAME: is not set and no connector was given/);
    expect(platform.requests).toHaveLength(0);
    for (const run of [both, missing, noConnector]) {
      expect(run.stdout + run.stderr).not.toContain(platform.credentials.clientSecret);
    }
  });

  test("hello, a sync at start and every interval: each upload's checksum and content match a local sync, labels syncing then connected; SIGTERM when idle exits 0", async (context) => {
    const { expect } = context;
    const { platform, stateDir, start, health, closeLater } = await scenario(context);
    const upstream = await startBlacklineSimulator({ size: { users: 300, teams: 20, roles: 6 } });
    closeLater(() => upstream.close());
    // The connector by variable, and the platform's secret from a file.
    const secretFile = join(stateDir, "client-secret");
    await writeFile(secretFile, `${platform.credentials.clientSecret}\n`);
    const service = start([], {
      ...upstream.env(),
      ...FAST_BLACKLINE,
      CONNECTOR_NAME: "blackline",
      CONNECTOR_CLIENT_SECRET: undefined,
      CONNECTOR_CLIENT_SECRET_FILE: secretFile,
      CONNECTOR_SYNC_INTERVAL: "2s",
    });

    // Logged once the upload is in and the label is `connected`.
    const uploaded = await waitFor("two syncs uploaded", () => {
      const lines = service.logged("sync uploaded");
      return lines.length >= 2 ? lines : undefined;
    });
    const local = await cli(["sync", "blackline", "--out", join(stateDir, "local.jsonl")], {
      ...upstream.env(),
      ...FAST_BLACKLINE,
    });
    expect(local.code).toBe(0);
    const expected = canonicalRecords(await readSnapshot(join(stateDir, "local.jsonl")));

    expect(platform.hellos[0]).toMatchObject({
      hostId: "host-1",
      connector: "blackline",
      version: packageJson.version,
      capabilities: ["sync"],
    });
    for (const upload of [...platform.uploads.values()].slice(0, 2)) {
      expect(upload).toMatchObject({ accepted: 1, rejected: 0, received: 1 });
      const lines = linesOf(upload.text);
      expect(lines[0]).toMatchObject({ kind: "sync_start", syncId: upload.syncId });
      expect(lines.at(-1)).toMatchObject({ kind: "sync_end", status: "complete" });
      expect(canonicalRecords(lines)).toEqual(expected);
      // The checksum the service sent is the one the platform computed on what it received.
      const log = uploaded.find((line) => line.syncId === upload.syncId);
      expect(log).toMatchObject({
        sha256: upload.sha256,
        bytes: upload.bytes,
        connectorId: "host-1",
      });
    }
    expect(platform.labels.slice(0, 4).map((l) => l.label)).toEqual([
      "syncing",
      "connected",
      "syncing",
      "connected",
    ]);
    expect(await health()).toMatchObject({
      status: "ok",
      connector: "blackline",
      platform: { reachable: true },
      lastSync: { outcome: "uploaded" },
    });
    expect(Date.parse((await health()).staleAfter)).toBeGreaterThan(Date.now());

    const stop = await service.stop("SIGTERM");
    expect(stop.code).toBe(0);
    expect(stop.ms).toBeLessThan(10_000);
    expect((await health()).status).toBe("stopped");
    expect(
      (await filesBelow(stateDir)).filter(
        (f) => !/^(state|health|local|client|published\.digest)/.test(f),
      ),
    ).toEqual([]);
    expectJsonLogs(service, expect);
    const secrets = [
      platform.credentials.clientSecret,
      upstream.credentials.clientSecret,
      upstream.credentials.apiKey,
      ...platform.issuedTokens(),
      ...upstream.issuedTokens(),
    ];
    for (const secret of secrets) expect(service.stdout + service.stderr).not.toContain(secret);
  });

  test("action tasks are carried out and finished with the reply; the same request again, even after a restart, changes nothing twice", async (context) => {
    const { expect } = context;
    const { platform, start, closeLater } = await scenario(context);
    const upstream = await startValimailSimulator({ users: 60 });
    closeLater(() => upstream.close());
    const env = valimailEnv(upstream, {
      CONNECTOR_PROVISIONING: "true",
      CONNECTOR_SYNC_INTERVAL: "1h",
    });
    const user = [...upstream.users.values()].find((u) => u.active);
    if (!user) throw new Error("the simulator has no active user");
    const request = {
      requestId: "req-disable-1",
      connectorId: "valimail-self-hosted",
      action: "disable_user",
      args: { user_id: user.id },
    };
    const finished = (id: string) => () => platform.finishedTasks.find((t) => t.id === id);

    const first = start(["valimail"], env);
    await waitFor("the sync at start", () => platform.uploads.size === 1);
    expect(platform.hellos[0]?.capabilities).toEqual([
      "sync",
      "enable_user",
      "disable_user",
      "create_account",
      "grant",
      "revoke",
    ]);
    const once = await waitFor(
      "the first action",
      finished(platform.enqueueTask({ type: "action", request })),
    );
    expect(once).toMatchObject({
      status: "succeeded",
      result: { user_id: user.id, active: false, changed: true },
    });
    expect(upstream.users.get(user.id)?.active).toBe(false);
    const writes = upstream.stats.writes;
    const reads = upstream.stats.byRoute.get ?? 0;
    expect(writes).toBe(1);

    const again = await waitFor(
      "the same request again",
      finished(platform.enqueueTask({ type: "action", request })),
    );
    expect(again).toMatchObject({ status: "succeeded", result: once.result });
    const malformed = await waitFor(
      "a malformed request",
      finished(
        platform.enqueueTask({
          type: "action",
          request: { ...request, requestId: "req-2", args: { user_id: "../x" } },
        }),
      ),
    );
    expect(malformed).toMatchObject({
      status: "failed",
      error: { code: "invalid_request", retryable: false },
    });
    const reused = await waitFor(
      "the same requestId for another request",
      finished(
        platform.enqueueTask({ type: "action", request: { ...request, action: "enable_user" } }),
      ),
    );
    expect(reused).toMatchObject({ status: "failed", error: { code: "invalid_request" } });
    expect((reused.error as { message: string }).message).toContain(
      "used before for a different request",
    );
    expect((await first.stop()).code).toBe(0);

    const second = start(["valimail"], env);
    await waitFor("the restarted service's hello", () => platform.hellos.length === 2);
    const afterRestart = await waitFor(
      "the same request after a restart",
      finished(platform.enqueueTask({ type: "action", request })),
    );
    expect(afterRestart).toMatchObject({ status: "succeeded", result: once.result });
    expect(upstream.stats.writes).toBe(writes);
    expect(upstream.stats.byRoute.get ?? 0).toBe(reads);
    expect((await second.stop()).code).toBe(0);
    expectJsonLogs(second, expect);
    expect(second.logged("action done before; answering with its first reply")).toHaveLength(1);
  });

  test("a sync task runs a sync now, with heartbeats while it runs, and finishes with its sync id", async (context) => {
    const { expect } = context;
    const { platform, start, closeLater } = await scenario(context);
    const upstream = await startBlacklineSimulator({ size: { users: 120, teams: 8, roles: 4 } });
    closeLater(() => upstream.close());
    const service = start(["blackline"], {
      ...upstream.env(),
      ...FAST_BLACKLINE,
      CONNECTOR_ACCOUNTING_MAX_CONCURRENCY: "1",
      CONNECTOR_SYNC_INTERVAL: "1h",
    });
    await waitFor("the sync at start", () => platform.uploads.size === 1);
    // Slow answers from here on: the task's sync outlasts the heartbeat interval (1 s).
    upstream.faults.latencyMs = 150;
    const taskId = platform.enqueueTask({ type: "sync" });
    const done = await waitFor("the sync task", () =>
      platform.finishedTasks.find((t) => t.id === taskId),
    );

    const syncId = (done.result as { syncId: string }).syncId;
    expect(done.status).toBe("succeeded");
    expect(platform.uploads.get(syncId)).toMatchObject({ accepted: 1 });
    expect(platform.heartbeats.get(taskId)).toBeGreaterThanOrEqual(1);
    expect(platform.labels.map((l) => l.label)).toEqual([
      "syncing",
      "connected",
      "syncing",
      "connected",
    ]);
    expect((await service.stop()).code).toBe(0);
  });

  test("the platform failing mid-upload, then recovering: the upload is retried and lands once", async (context) => {
    const { expect } = context;
    const { platform, start, closeLater } = await scenario(context);
    const upstream = await startBlacklineSimulator({ size: { users: 150, teams: 10, roles: 4 } });
    closeLater(() => upstream.close());
    // One connection dropped as the body arrives, then 500s: more than one call's retries.
    platform.failNext("snapshot", 1, "drop");
    platform.failNext("snapshot", 3, "status500");
    const service = start(["blackline"], {
      ...upstream.env(),
      ...FAST_BLACKLINE,
      CONNECTOR_SYNC_INTERVAL: "1h",
    });

    await waitFor("the connected label", () =>
      platform.labels.some((l) => l.label === "connected"),
    );
    expect(platform.uploads.size).toBe(1);
    const [upload] = [...platform.uploads.values()];
    expect(upload).toMatchObject({ received: 5, accepted: 1, rejected: 0 });
    expect(linesOf(upload?.text).at(-1)).toMatchObject({ kind: "sync_end", status: "complete" });
    expect(platform.labels.map((l) => l.label)).toEqual(["syncing", "connected"]);
    expect(service.logged("snapshot upload failed; trying again after a wait")).toHaveLength(1);
    expect((await service.stop()).code).toBe(0);
  });

  test("SIGTERM mid-sync: exit 0 within 10 s, no upload, no temporary file left, the task finished and the label put back", async (context) => {
    const { expect } = context;
    const { platform, stateDir, start, closeLater } = await scenario(context);
    const upstream = await startBlacklineSimulator({ size: { users: 400, teams: 30, roles: 6 } });
    closeLater(() => upstream.close());
    const service = start(["blackline"], {
      ...upstream.env(),
      ...FAST_BLACKLINE,
      CONNECTOR_ACCOUNTING_MAX_CONCURRENCY: "1",
      CONNECTOR_ACCOUNTING_PAGE_SIZE: "50",
      CONNECTOR_SYNC_INTERVAL: "1h",
    });
    await waitFor("the sync at start", () => platform.labels.some((l) => l.label === "connected"));
    upstream.faults.latencyMs = 100;
    const taskId = platform.enqueueTask({ type: "sync" });
    const requestsBefore = upstream.stats.requests;
    await waitFor(
      "the task's sync under way",
      async () =>
        upstream.stats.requests >= requestsBefore + 5 &&
        (await filesBelow(stateDir)).some((f) => f.endsWith(".partial")),
    );

    const stop = await service.stop("SIGTERM");
    expect(stop.code).toBe(0);
    expect(stop.ms).toBeLessThan(10_000);
    expect(platform.uploads.size).toBe(1);
    // published.digest: the removal guard's record of the first sync's upload
    expect(await filesBelow(stateDir)).toEqual(["health.json", "published.digest", "state.json"]);
    expect(platform.finishedTasks.find((t) => t.id === taskId)).toMatchObject({
      status: "failed",
      error: { code: "shutting_down", retryable: true },
    });
    expect(platform.labels.map((l) => l.label)).toEqual([
      "syncing",
      "connected",
      "syncing",
      "connected",
    ]);
    expect(
      service.logged("sync abandoned: the service is stopping; nothing was uploaded"),
    ).toHaveLength(1);
    expectJsonLogs(service, expect);
  });

  test("an upstream that rejects the credentials: label error with a reason to act on; the service keeps running, tries again each interval, and takes a corrected secret file without a restart", async (context) => {
    const { expect } = context;
    const { platform, stateDir, start, closeLater } = await scenario(context);
    const upstream = await startBlacklineSimulator({ size: { users: 80, teams: 5, roles: 3 } });
    closeLater(() => upstream.close());
    const secretFile = join(stateDir, "blackline-secret");
    await writeFile(secretFile, "an-outdated-client-secret\n");
    const { CONNECTOR_ACCOUNTING_CLIENT_SECRET: right, ...env } = upstream.env();
    const service = start(["blackline"], {
      ...env,
      ...FAST_BLACKLINE,
      CONNECTOR_ACCOUNTING_CLIENT_SECRET_FILE: secretFile,
      CONNECTOR_SYNC_INTERVAL: "1s",
    });

    const errors = await waitFor("two failed syncs, each labelled error", () => {
      const labels = platform.labels.filter((l) => l.label === "error");
      return labels.length >= 2 ? labels : undefined;
    });
    expect(service.logged("sync failed").length).toBeGreaterThanOrEqual(2);
    expect(errors[0]?.detail).toMatch(/^BlackLine rejected the credentials: .*invalid_client/);
    expect(errors[0]?.detail).toContain("CONNECTOR_ACCOUNTING_CLIENT_SECRET");
    expect(errors[0]?.detail).toMatch(/Nothing was uploaded; the next sync starts at \d{4}-/);
    expect(errors[0]?.detail).not.toContain("an-outdated-client-secret");
    expect(platform.uploads.size).toBe(0);
    expect(service.running).toBe(true);

    await writeFile(secretFile, `${right}\n`);
    await waitFor("an upload with the corrected secret", () => platform.uploads.size === 1);
    await waitFor("the connected label", () => platform.labels.at(-1)?.label === "connected");
    expect((await service.stop()).code).toBe(0);
    expect(service.stdout).not.toContain("an-outdated-client-secret");
  });

  test("a platform that is down at start: the service waits, backing off, and recovers without a restart", async (context) => {
    const { expect } = context;
    const { platform, start, health, closeLater } = await scenario(context);
    const upstream = await startBlacklineSimulator({ size: { users: 80, teams: 5, roles: 3 } });
    closeLater(() => upstream.close());
    const port = await freePort();
    const service = start(["blackline"], {
      ...upstream.env(),
      ...FAST_BLACKLINE,
      CONNECTOR_PLATFORM_URL: `http://127.0.0.1:${port}`,
      CONNECTOR_SYNC_INTERVAL: "1h",
    });

    const waits = await waitFor("two waits for the platform", () => {
      const lines = service.logged("the platform cannot be reached; trying again after a wait");
      return lines.length >= 2 ? lines : undefined;
    });
    expect(waits.map((line) => line.failures)).toEqual([1, 2]);
    const waiting = await waitFor("the health file to say so", async () => {
      const report = await health();
      return report.platform.problem ? report : undefined;
    });
    expect(waiting).toMatchObject({ status: "starting", platform: { reachable: false } });
    expect(waiting.platform.problem).toContain("ECONNREFUSED");
    expect(upstream.stats.requests).toBe(0);

    const proxy = await forwardPort(port, platform);
    closeLater(() => proxy.close());
    await waitFor("the upload after the platform came back", () => platform.uploads.size === 1);
    await waitFor("the connected label", () => platform.labels.at(-1)?.label === "connected");
    expect(service.running).toBe(true);
    expect(platform.hellos).toHaveLength(1);
    await waitFor("a healthy health file", async () => (await health()).status === "ok");
    expect((await service.stop()).code).toBe(0);
  });

  test("the platform rejecting its credentials: the service keeps trying, and takes a rotated secret file without a restart", async (context) => {
    const { expect } = context;
    const { platform, stateDir, start, closeLater } = await scenario(context);
    const upstream = await startBlacklineSimulator({ size: { users: 40, teams: 3, roles: 2 } });
    closeLater(() => upstream.close());
    const secretFile = join(stateDir, "platform-secret");
    await writeFile(secretFile, "the-revoked-platform-secret\n");
    const service = start(["blackline"], {
      ...upstream.env(),
      ...FAST_BLACKLINE,
      CONNECTOR_CLIENT_SECRET: undefined,
      CONNECTOR_CLIENT_SECRET_FILE: secretFile,
      CONNECTOR_SYNC_INTERVAL: "1h",
    });

    const rejected = await waitFor(
      "a rejection",
      () =>
        service.logged("the platform rejected the credentials; reading them again after a wait")[0],
    );
    expect(rejected).toMatchObject({
      level: "ERROR",
      fix: expect.stringContaining("CONNECTOR_CLIENT_SECRET"),
    });
    expect(platform.hellos).toHaveLength(0);
    await writeFile(secretFile, `${platform.credentials.clientSecret}\n`);
    await waitFor("the upload with the rotated secret", () => platform.uploads.size === 1);
    expect(service.running).toBe(true);
    expect((await service.stop()).code).toBe(0);
    expect(service.stdout).not.toContain("the-revoked-platform-secret");
  });
});
