// The settings function on moto_server (docs/settings.md): the platform's Settings page
// saves, tests, reads and removes an instance by invoking it, and a save's first sync runs
// through the stage's queues to a complete upload. moto cannot run Lambda code: the harness runs
// the packaged handler with the deployed function's environment. Upstreams and the platform are
// the simulators on loopback, each with secrets of its own, so that a leak is found by value.
// The cases run in cloud.test.ts, on that file's stack (one moto_server and one deploy for all).
import { ListSecretVersionIdsCommand, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { afterAll, beforeAll, expect, it } from "vitest";
import { InstanceRegistry } from "../../lib/cloud";
import type { SettingsReply } from "../../lib/cloud/settings";
import { type BlacklineSimulator, startBlacklineSimulator } from "../../lib/simulators/blackline";
import { type PlatformSimulator, startPlatformSimulator } from "../../lib/simulators/platform";
import { startValimailSimulator, type ValimailSimulator } from "../../lib/simulators/valimail";
import { awsClientConfig, type Moto, runOperator, type Stack } from "./harness";

/** Secrets no other test uses: any of them in a reply or a log line is a leak. */
const SECRETS = {
  blacklineClientSecret: "settings-bl-client-secret-5e1f93",
  blacklineApiKey: "settings-bl-api-key-a7c3d0",
  valimailClientId: "settings-vm-client-id-2b8e47",
  valimailAppId: "settings-vm-app-id-91f0c6",
  platformSecret: "settings-platform-secret-3d6a12",
};

/**
 * The settings function's cases, in the describe block that calls this. `deployed` gives the
 * stack once the file's beforeAll has deployed it; `runQueues` runs the sync workers and finalize
 * the way Lambda would until the queues are empty.
 */
export function settingsFunctionCases(
  deployed: () => { moto: Moto; stack: Stack },
  runQueues: () => Promise<unknown>,
) {
  let stack: Stack;
  let moto: Moto;
  let blackline: BlacklineSimulator;
  let valimail: ValimailSimulator;
  const platforms: PlatformSimulator[] = [];
  /** Every reply of these cases, searched for secrets at the end. */
  const replies: SettingsReply[] = [];

  beforeAll(async () => {
    ({ moto, stack } = deployed());
    blackline = await startBlacklineSimulator({
      seed: 21,
      size: { users: 60, teams: 6, roles: 3 },
      credentials: { clientSecret: SECRETS.blacklineClientSecret, apiKey: SECRETS.blacklineApiKey },
    });
    valimail = await startValimailSimulator({
      seed: 22,
      users: 40,
      credentials: { clientId: SECRETS.valimailClientId, appId: SECRETS.valimailAppId },
    });
  });

  afterAll(async () => {
    await blackline?.close();
    await valimail?.close();
    for (const platform of platforms) await platform.close();
  });

  const settingsFn = async (request: unknown): Promise<SettingsReply> => {
    const reply = await stack.invokeByName<SettingsReply>(
      stack.outputs.SettingsFunctionName as string,
      request,
    );
    replies.push(reply);
    return reply;
  };

  /** A platform of its own, and the fields a Settings page sends for it (no host id: the instance is the host). */
  async function platform() {
    const sim = await startPlatformSimulator({ clientSecret: SECRETS.platformSecret });
    platforms.push(sim);
    const { CONNECTOR_HOST_ID: _host, ...fields } = sim.env();
    return { sim, fields };
  }

  const registry = () => new InstanceRegistry(stack.outputs.InstancesTableName as string);

  it("saves a BlackLine and a Valimail instance: label syncing, then a complete upload of each", async () => {
    const bl = await platform();
    const vm = await platform();

    const saves = [
      await settingsFn({
        requestId: "save-bl-1",
        op: "save",
        connectorId: "settings-bl",
        connector: "blackline",
        // No shared rate (a permit write a request): the upload is what these cases look at.
        settings: {
          ...blackline.env(),
          ...bl.fields,
          CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0",
        },
        interval: "6h",
      }),
      await settingsFn({
        requestId: "save-vm-1",
        op: "save",
        connectorId: "settings-vm",
        connector: "valimail",
        settings: { ...valimail.env(), ...vm.fields, CONNECTOR_EMAILAUTH_REQUESTS_PER_SECOND: "0" },
      }),
    ];
    await runQueues();

    for (const [reply, sim, connector, interval] of [
      [saves[0], bl.sim, "blackline", "6h"],
      [saves[1], vm.sim, "valimail", "1h"],
    ] as const) {
      expect(reply).toMatchObject({
        status: "succeeded",
        result: { connector, interval, label: "syncing", sync: { status: "started" } },
      });
      const { syncId } = (reply as { result: { sync: { syncId: string } } }).result.sync;
      expect(sim.labels.map((l) => l.label)).toEqual(["syncing", "connected"]);
      const text = sim.uploads.get(syncId)?.text ?? "";
      const lines = text.trim().split("\n");
      expect(JSON.parse(lines[0] as string)).toMatchObject({
        kind: "sync_start",
        syncId,
        connector,
      });
      expect(JSON.parse(lines.at(-1) as string)).toMatchObject({
        kind: "sync_end",
        status: "complete",
      });
    }
    expect(await registry().get("settings-bl")).toMatchObject({
      label: "connected",
      lastSyncStatus: "complete",
      intervalSeconds: 6 * 3600,
    });
  });

  it("answers get with every secret masked, the interval, label and last run", async () => {
    const reply = await settingsFn({
      requestId: "get-bl-1",
      op: "get",
      connectorId: "settings-bl",
    });

    expect(reply).toMatchObject({
      status: "succeeded",
      result: {
        connectorId: "settings-bl",
        connector: "blackline",
        interval: "6h",
        label: "connected",
        lastRun: { status: "complete" },
        settings: {
          CONNECTOR_ACCOUNTING_CLIENT_ID: blackline.env().CONNECTOR_ACCOUNTING_CLIENT_ID,
          CONNECTOR_ACCOUNTING_USERNAME: blackline.env().CONNECTOR_ACCOUNTING_USERNAME,
          CONNECTOR_ACCOUNTING_CLIENT_SECRET: "********",
          CONNECTOR_ACCOUNTING_API_KEY: "********",
          CONNECTOR_CLIENT_SECRET: "********",
        },
      },
    });
    for (const secret of Object.values(SECRETS))
      expect(JSON.stringify(reply)).not.toContain(secret);
  });

  it("keeps a stored secret sent as null, and a repeated requestId changes nothing twice", async () => {
    const { sim: moved, fields } = await platform();
    const save = {
      requestId: "save-bl-null-1",
      op: "save",
      connectorId: "settings-bl",
      connector: "blackline",
      settings: {
        ...blackline.env(),
        ...fields,
        CONNECTOR_ACCOUNTING_CLIENT_SECRET: null,
        CONNECTOR_ACCOUNTING_API_KEY: null,
        CONNECTOR_CLIENT_SECRET: null,
        CONNECTOR_ACCOUNTING_PAGE_SIZE: "50",
      },
      sync: false,
    };
    const secrets = new SecretsManagerClient(awsClientConfig(moto.endpoint));
    const versions = async () =>
      (
        await secrets.send(
          new ListSecretVersionIdsCommand({
            SecretId: `${stack.outputs.SecretsPrefix}settings-bl`,
          }),
        )
      ).Versions?.length;

    const first = await settingsFn(save);
    const afterFirst = { versions: await versions(), row: await registry().get("settings-bl") };
    const again = await settingsFn(save);
    const reused = await settingsFn({
      requestId: save.requestId,
      op: "remove",
      connectorId: "settings-bl",
      force: true,
    });
    // The kept secrets still work: the upstream accepts what is stored.
    const tested = await settingsFn({
      requestId: "test-bl-kept-1",
      op: "test",
      connectorId: "settings-bl",
      connector: "blackline",
      settings: save.settings,
    });
    const shown = await settingsFn({
      requestId: "get-bl-2",
      op: "get",
      connectorId: "settings-bl",
    });
    secrets.destroy();

    expect(first).toMatchObject({ status: "succeeded", result: { label: "connected" } });
    expect(again).toEqual(first);
    expect(await versions()).toBe(afterFirst.versions);
    expect((await registry().get("settings-bl"))?.updatedAt).toBe(afterFirst.row?.updatedAt);
    expect(reused).toMatchObject({
      status: "failed",
      error: { code: "invalid_request", message: expect.stringMatching(/different request/) },
    });
    expect(tested).toMatchObject({ status: "succeeded", result: { accepted: true } });
    expect(shown).toMatchObject({
      status: "succeeded",
      result: { settings: { CONNECTOR_ACCOUNTING_PAGE_SIZE: "50" } },
    });

    // Functions still warm from the first run read the saved settings: this run uploads to the
    // platform the save named, not to the one they read five minutes' cache ago.
    const next = await stack.invokeByName<{ syncId: string; status: string }>(
      stack.outputs.SchedulerFunctionName as string,
      { connectorId: "settings-bl" },
    );
    await runQueues();
    expect(next.status).toBe("started");
    expect(moved.uploads.get(next.syncId)?.accepted).toBe(1);
  });

  it("answers a save with a wrong scope, a bad environment and no username invalid, one entry a field, storing nothing", async () => {
    const { fields } = await platform();
    const {
      CONNECTOR_ACCOUNTING_USERNAME: _missing,
      CONNECTOR_ACCOUNTING_BASE_URL: _url,
      ...rest
    } = blackline.env();
    const before = blackline.stats.requests;

    const reply = await settingsFn({
      requestId: "save-bad-1",
      op: "save",
      connectorId: "settings-bad",
      connector: "blackline",
      settings: {
        ...rest,
        ...fields,
        CONNECTOR_ACCOUNTING_SCOPE: "DataIngestionAPI instance_1234",
        CONNECTOR_ACCOUNTING_ENVIRONMENT: "Acme Corp",
        CONNECTOR_HOST_ID: "a-host",
      },
    });

    expect(reply.status).toBe("invalid");
    const errors = reply.status === "invalid" ? reply.errors : [];
    expect(errors.map((e) => e.field).sort()).toEqual([
      "CONNECTOR_ACCOUNTING_ENVIRONMENT",
      "CONNECTOR_ACCOUNTING_SCOPE",
      "CONNECTOR_ACCOUNTING_USERNAME",
      "CONNECTOR_HOST_ID",
    ]);
    const byField = Object.fromEntries(errors.map((e) => [e.field, e]));
    expect(byField.CONNECTOR_ACCOUNTING_ENVIRONMENT).toEqual({
      field: "CONNECTOR_ACCOUNTING_ENVIRONMENT",
      message: '"Acme Corp" is not a single DNS label',
      fix: expect.stringMatching(
        /region subdomain of https:\/\/\{environment\}\.api\.blackline\.com/,
      ),
    });
    expect(byField.CONNECTOR_ACCOUNTING_SCOPE?.fix).toMatch(
      /instance_ followed by the instance GUID/,
    );
    expect(byField.CONNECTOR_ACCOUNTING_USERNAME).toMatchObject({
      message: "is not set",
      fix: "set it to the BlackLine username the API key belongs to",
    });
    expect(byField.CONNECTOR_HOST_ID?.message).toMatch(/is not a setting of a BlackLine instance/);
    expect(await registry().get("settings-bad")).toBeUndefined();
    expect(
      await settingsFn({ requestId: "get-bad-1", op: "get", connectorId: "settings-bad" }),
    ).toMatchObject({ status: "failed", error: { code: "not_found", retryable: false } });
    expect(blackline.stats.requests).toBe(before);
  });

  it("answers test with a wrong API key auth_failed naming the field, and stores nothing", async () => {
    const { fields } = await platform();

    const reply = await settingsFn({
      requestId: "test-bl-wrong-1",
      op: "test",
      connector: "blackline",
      settings: { ...blackline.env(), ...fields, CONNECTOR_ACCOUNTING_API_KEY: "not-the-key-6b21" },
    });

    expect(reply).toMatchObject({
      status: "failed",
      error: {
        code: "auth_failed",
        field: "CONNECTOR_ACCOUNTING_API_KEY",
        retryable: false,
        message: expect.stringMatching(/invalid_grant/),
      },
    });
    expect(JSON.stringify(reply)).not.toMatch(/not-the-key-6b21/);
  });

  it("refuses to remove an instance while its run is in flight, and removes it after", async () => {
    const { fields } = await platform();
    const save = await settingsFn({
      requestId: "save-vm-busy-1",
      op: "save",
      connectorId: "settings-vm-busy",
      connector: "valimail",
      settings: { ...valimail.env(), ...fields },
    });
    expect(save).toMatchObject({ status: "succeeded", result: { label: "syncing" } });

    const refused = await settingsFn({
      requestId: "remove-vm-busy-1",
      op: "remove",
      connectorId: "settings-vm-busy",
    });
    // `cloud remove` carries out the same request in its own process.
    const operatorRefused = await runOperator(stack, ["remove", "settings-vm-busy"]);
    await runQueues();
    const removed = await settingsFn({
      requestId: "remove-vm-busy-1",
      op: "remove",
      connectorId: "settings-vm-busy",
    });

    expect(refused).toMatchObject({
      status: "failed",
      error: { code: "run_in_progress", retryable: true },
    });
    // Not remembered: the same requestId, asked again once the run ended, removes it.
    expect(removed).toEqual({
      requestId: "remove-vm-busy-1",
      status: "succeeded",
      result: { connectorId: "settings-vm-busy", removed: true },
    });
    expect(await registry().get("settings-vm-busy")).toBeUndefined();
    expect(operatorRefused.code).toBe(1);
    expect(operatorRefused.stderr).toMatch(/run_in_progress: settings-vm-busy has a run in flight/);
    const again = await runOperator(stack, ["remove", "settings-vm-busy"]);
    expect(again.stdout).toMatch(/no such instance on stage dev; nothing to remove/);
    expect(again.code).toBe(0);
  });

  it("answers a malformed request invalid_request, storing and sending nothing", async () => {
    const { fields } = await platform();
    const before = { blackline: blackline.stats.requests, valimail: valimail.stats.requests };
    const settings = { ...blackline.env(), ...fields };

    // One after another: one warm container, as a page's requests come.
    const malformed: SettingsReply[] = [];
    for (const request of [
      { requestId: "m-1", op: "rename", connectorId: "settings-m" },
      { requestId: "m-2", op: "save", connectorId: "settings-m", connector: "blackline" },
      { requestId: "m-3", op: "save", connectorId: "../x", connector: "blackline", settings },
      { requestId: "m-4", op: "test", connector: "sap", settings },
      {
        requestId: "m-5",
        op: "save",
        connectorId: "settings-m",
        connector: "blackline",
        settings,
        extra: 1,
      },
      "not even an object",
      null,
    ]) {
      malformed.push(await settingsFn(request));
    }

    for (const reply of malformed) {
      expect(reply).toMatchObject({
        status: "failed",
        error: { code: "invalid_request", retryable: false },
      });
    }
    expect(malformed.map((r) => r.requestId)).toEqual([
      "m-1",
      "m-2",
      "m-3",
      "m-4",
      "m-5",
      "unknown",
      "unknown",
    ]);
    expect(await registry().get("settings-m")).toBeUndefined();
    expect({ blackline: blackline.stats.requests, valimail: valimail.stats.requests }).toEqual(
      before,
    );
  });

  it("never shows a secret value in a reply or a log line of these cases", () => {
    const logs = stack.logs().map((l) => l.line);
    expect(stack.logs("settings").length).toBeGreaterThan(0);
    const seen = [...replies.map((r) => JSON.stringify(r)), ...logs].filter((text) =>
      Object.values(SECRETS).some((secret) => text.includes(secret)),
    );
    expect(seen).toEqual([]);
  });
}
