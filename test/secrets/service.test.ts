import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BlacklineSimulator, startBlacklineSimulator } from "../../lib/simulators/blackline";
import { type PlatformSimulator, startPlatformSimulator } from "../../lib/simulators/platform";
import { startValimailSimulator, type ValimailSimulator } from "../../lib/simulators/valimail";
import { makeTempDir } from "../helpers/tempDir";
import { type RecordingServer, startRecordingServer } from "../property/recordingServer";
import { filesBelow, ServiceProcess, waitFor } from "../service/harness";
import { ECHO_ITEMS, ECHO_TOKEN, echoAnswer } from "./echoUpstream";
import { BLACKLINE_CLIENT_ID, basicToken, leakChecker, SECRETS } from "./secretForms";

/**
 * The self-hosted service (the built executable) at CONNECTOR_LOG_LEVEL=debug: a sync and an
 * action task of each connector, and failing upstreams and a failing platform that echo what they
 * were sent. No form of any secret or token appears on stdout, stderr, in the health file, in the
 * state directory, in what the platform received (snapshots, labels, task finishes).
 */

let blackline: BlacklineSimulator;
let valimail: ValimailSimulator;
let platform: PlatformSimulator;
let echo: RecordingServer;
let dir: string;
const services: ServiceProcess[] = [];
const outputs: { what: string; text: string }[] = [];

beforeAll(async () => {
  dir = await makeTempDir("ac-secrets-service-");
  await writeFile(join(dir, "api-key"), `${SECRETS.blacklineApiKey}\n\n`);
  await writeFile(join(dir, "platform-secret"), `${SECRETS.platformSecret}\n`);
  blackline = await startBlacklineSimulator({
    size: { users: 30, teams: 4, roles: 3 },
    credentials: {
      clientId: BLACKLINE_CLIENT_ID,
      clientSecret: SECRETS.blacklineClientSecret,
      username: "api.admin",
      apiKey: SECRETS.blacklineApiKey,
    },
  });
  valimail = await startValimailSimulator({
    users: 12,
    credentials: { clientId: SECRETS.valimailClientId, appId: SECRETS.valimailAppId },
  });
  platform = await startPlatformSimulator({
    pollIntervalSeconds: 1,
    clientSecret: SECRETS.platformSecret,
  });
  echo = await startRecordingServer();
});

afterAll(async () => {
  for (const service of services) if (service.running) service.child.kill("SIGKILL");
  await Promise.all([blackline.close(), valimail.close(), platform.close(), echo.close()]);
});

function start(name: string, connector: "blackline" | "valimail", env: Record<string, string>) {
  const stateDir = join(dir, name);
  const service = new ServiceProcess([connector], {
    HOME: dir,
    CONNECTOR_STATE_DIR: stateDir,
    CONNECTOR_LOG_LEVEL: "debug",
    CONNECTOR_PLATFORM_URL: platform.url,
    CONNECTOR_CLIENT_ID: platform.credentials.clientId,
    CONNECTOR_CLIENT_SECRET_FILE: join(dir, "platform-secret"),
    CONNECTOR_HOST_ID: name,
    CONNECTOR_SYNC_INTERVAL: "1h",
    ...env,
  });
  services.push(service);
  return { service, stateDir };
}

function blacklineEnv(baseUrl: string, clientAuth: "body" | "basic") {
  return {
    CONNECTOR_ACCOUNTING_CLIENT_ID: BLACKLINE_CLIENT_ID,
    CONNECTOR_ACCOUNTING_CLIENT_SECRET: SECRETS.blacklineClientSecret,
    CONNECTOR_ACCOUNTING_API_KEY_FILE: join(dir, "api-key"),
    CONNECTOR_ACCOUNTING_USERNAME: "api.admin",
    CONNECTOR_ACCOUNTING_SCOPE: blackline.scope,
    CONNECTOR_ACCOUNTING_BASE_URL: baseUrl,
    CONNECTOR_ACCOUNTING_CLIENT_AUTH: clientAuth,
    CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0",
  };
}

function valimailEnv(baseUrl: string) {
  return {
    CONNECTOR_EMAILAUTH_CLIENT_ID: SECRETS.valimailClientId,
    CONNECTOR_EMAILAUTH_APP_ID: `  ${SECRETS.valimailAppId} `,
    CONNECTOR_EMAILAUTH_SLUG: valimail.slug,
    CONNECTOR_EMAILAUTH_BASE_URL: baseUrl,
    CONNECTOR_EMAILAUTH_REQUESTS_PER_SECOND: "0",
    CONNECTOR_PROVISIONING: "true",
  };
}

/** Stops the service and keeps everything it wrote. */
async function collect(name: string, service: ServiceProcess, stateDir: string) {
  await service.stop();
  outputs.push(
    { what: `${name} stdout`, text: service.stdout },
    { what: `${name} stderr`, text: service.stderr },
  );
  for (const file of await filesBelow(stateDir)) {
    outputs.push({ what: `${name} ${file}`, text: await readFile(join(stateDir, file), "utf8") });
  }
}

function finished(taskId: string) {
  return () => platform.finishedTasks.find((task) => task.id === taskId);
}

describe("no secret reaches the service's output (CONNECTOR_LOG_LEVEL=debug)", () => {
  it("BlackLine and Valimail: syncs, a sync task and action tasks", async () => {
    // Some answers fail at first, so the retries' debug lines are written too.
    blackline.faults = { serverErrors: { every: 9, burst: 1 }, perRequest: true };
    for (const clientAuth of ["body", "basic"] as const) {
      const name = `blackline-${clientAuth}`;
      const uploaded = platform.uploads.size;
      const { service, stateDir } = start(
        name,
        "blackline",
        blacklineEnv(blackline.url, clientAuth),
      );
      await waitFor(`${name} upload`, () => platform.uploads.size > uploaded);
      const action = platform.enqueueTask({
        type: "action",
        request: {
          requestId: `${name}-1`,
          connectorId: name,
          action: "disable_user",
          args: { user_id: "1" },
        },
      });
      const sync = platform.enqueueTask({ type: "sync" });
      await waitFor(`${name} tasks`, () => finished(action)() && finished(sync)());
      expect(finished(action)()?.error).toMatchObject({ code: "unsupported" });
      await collect(name, service, stateDir);
    }

    const { service, stateDir } = start("valimail", "valimail", valimailEnv(valimail.url));
    const user = [...valimail.users.values()][0];
    const tasks = ["disable_user", "enable_user"].map((action, n) =>
      platform.enqueueTask({
        type: "action",
        request: {
          requestId: `valimail-${n}`,
          connectorId: "valimail",
          action,
          args: { user_id: user?.id },
        },
      }),
    );
    tasks.push(platform.enqueueTask({ type: "sync" }));
    await waitFor("valimail tasks", () => tasks.every((id) => finished(id)()));
    expect(platform.finishedTasks.filter((t) => tasks.includes(t.id)).map((t) => t.status)).toEqual(
      ["succeeded", "succeeded", "succeeded"],
    );
    await collect("valimail", service, stateDir);
  });

  it("an upstream that fails and echoes the request: the sync's error and a failed action", async () => {
    for (const mode of ["token_401", "resource_401"] as const) {
      for (const item of [0, 2, ECHO_ITEMS - 1]) {
        echo.answer = echoAnswer(mode, item);
        const name = `echo-${mode}-${item}`;
        const before = platform.labels.length;
        const bl = start(
          `${name}-bl`,
          "blackline",
          blacklineEnv(echo.url, item % 2 === 0 ? "basic" : "body"),
        );
        const vm = start(`${name}-vm`, "valimail", valimailEnv(echo.url));
        const action = platform.enqueueTask({
          type: "action",
          request: {
            requestId: `${name}-a`,
            connectorId: "valimail",
            action: "disable_user",
            args: { user_id: "u-1" },
          },
        });
        await waitFor(
          `${name} errors`,
          () => platform.labels.slice(before).filter((l) => l.label === "error").length >= 2,
        );
        await waitFor(`${name} action`, finished(action));
        await collect(`${name}-bl`, bl.service, bl.stateDir);
        await collect(`${name}-vm`, vm.service, vm.stateDir);
      }
    }
  });

  it("a platform that rejects the credentials and echoes the token request", async () => {
    echo.answer = echoAnswer("token_401", 0);
    const { service, stateDir } = start("platform-echo", "blackline", {
      ...blacklineEnv(blackline.url, "body"),
      CONNECTOR_PLATFORM_URL: echo.url,
    });
    await waitFor(
      "a rejected platform token request",
      () =>
        echo.received.some((r) => r.target === "/auth/v1/token") &&
        service.lines.some((line) => /platform/i.test(line.message) && line.level !== "DEBUG"),
    );
    await collect("platform-echo", service, stateDir);
  });

  it("no output holds any form of a secret or token; nor does anything the platform received", () => {
    for (const upload of platform.uploads.values())
      outputs.push({ what: `upload ${upload.syncId}`, text: upload.text ?? "" });
    outputs.push({ what: "labels", text: JSON.stringify(platform.labels) });
    outputs.push({ what: "task finishes", text: JSON.stringify(platform.finishedTasks) });
    expect(platform.uploads.size).toBeGreaterThanOrEqual(3);
    const leaks = leakChecker(
      [
        ...Object.values(SECRETS),
        ...blackline.issuedTokens(),
        ...valimail.issuedTokens(),
        ...platform.issuedTokens(),
        ECHO_TOKEN,
      ],
      [basicToken(BLACKLINE_CLIENT_ID, SECRETS.blacklineClientSecret)],
    );
    const found = outputs.flatMap(({ what, text }) =>
      leaks(text).map((leak) => `${what}: ${leak}`),
    );
    expect(found).toEqual([]);
    // The outputs are real: debug lines were written, and the echoes were redacted in them.
    expect(outputs.some((o) => o.text.includes('"level":"DEBUG"'))).toBe(true);
    expect(outputs.some((o) => o.text.includes("[REDACTED]"))).toBe(true);
  });
});
