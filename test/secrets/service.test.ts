import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { filesBelow, ServiceProcess, waitFor } from "../service/harness";
import { ECHO_ITEMS, echoAnswer } from "./echoUpstream";
import { type SecretUpstreams, startSecretUpstreams } from "./secretUpstreams";

/**
 * The self-hosted service (the built executable) at CONNECTOR_LOG_LEVEL=debug: a sync and an
 * action task of each connector, and failing upstreams and a failing platform that echo what they
 * were sent. No form of any secret or token appears on stdout, stderr, in the health file, in the
 * state directory, in what the platform received (snapshots, labels, task finishes).
 */

let up: SecretUpstreams;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  // The Valimail app id has spaces around it, the platform secret comes from a file: both trimmed.
  up = await startSecretUpstreams({
    tempPrefix: "ac-secrets-service-",
    blackline: { size: { users: 30, teams: 4, roles: 3 } },
    valimailAppId: "padded",
    platformVariables: "secret file",
    platformPollSeconds: 1,
  });
});

afterAll(async () => {
  for (const service of services) if (service.running) service.child.kill("SIGKILL");
  await up?.close();
});

/** `env` is a connector's (with the platform's variables); the service's own are added here. */
function start(name: string, connector: "blackline" | "valimail", env: Record<string, string>) {
  const stateDir = join(up.dir, name);
  const service = new ServiceProcess([connector], {
    HOME: up.dir,
    CONNECTOR_STATE_DIR: stateDir,
    CONNECTOR_LOG_LEVEL: "debug",
    CONNECTOR_HOST_ID: name,
    CONNECTOR_SYNC_INTERVAL: "1h",
    ...env,
  });
  services.push(service);
  return { service, stateDir };
}

/** Stops the service and keeps everything it wrote. */
async function collect(name: string, service: ServiceProcess, stateDir: string) {
  await service.stop();
  up.record(name, service);
  for (const file of await filesBelow(stateDir)) {
    up.outputs.push({
      what: `${name} ${file}`,
      text: await readFile(join(stateDir, file), "utf8"),
    });
  }
}

function finished(taskId: string) {
  return () => up.platform.finishedTasks.find((task) => task.id === taskId);
}

describe("no secret reaches the service's output (CONNECTOR_LOG_LEVEL=debug)", () => {
  it("BlackLine and Valimail: syncs, a sync task and action tasks", async () => {
    // Some answers fail at first, so the retries' debug lines are written too.
    up.blackline.faults = { serverErrors: { every: 9, burst: 1 }, perRequest: true };
    for (const clientAuth of ["body", "basic"] as const) {
      const name = `blackline-${clientAuth}`;
      const uploaded = up.platform.uploads.size;
      const { service, stateDir } = start(
        name,
        "blackline",
        up.blacklineEnv(up.blackline.url, clientAuth),
      );
      await waitFor(`${name} upload`, () => up.platform.uploads.size > uploaded);
      const action = up.platform.enqueueTask({
        type: "action",
        request: {
          requestId: `${name}-1`,
          connectorId: name,
          action: "disable_user",
          args: { user_id: "1" },
        },
      });
      const sync = up.platform.enqueueTask({ type: "sync" });
      await waitFor(`${name} tasks`, () => finished(action)() && finished(sync)());
      expect(finished(action)()?.error).toMatchObject({ code: "unsupported" });
      await collect(name, service, stateDir);
    }

    const { service, stateDir } = start("valimail", "valimail", up.valimailEnv(up.valimail.url));
    const user = [...up.valimail.users.values()][0];
    const tasks = ["disable_user", "enable_user"].map((action, n) =>
      up.platform.enqueueTask({
        type: "action",
        request: {
          requestId: `valimail-${n}`,
          connectorId: "valimail",
          action,
          args: { user_id: user?.id },
        },
      }),
    );
    tasks.push(up.platform.enqueueTask({ type: "sync" }));
    await waitFor("valimail tasks", () => tasks.every((id) => finished(id)()));
    expect(
      up.platform.finishedTasks.filter((t) => tasks.includes(t.id)).map((t) => t.status),
    ).toEqual(["succeeded", "succeeded", "succeeded"]);
    await collect("valimail", service, stateDir);
  });

  it("an upstream that fails and echoes the request: the sync's error and a failed action", async () => {
    for (const mode of ["token_401", "resource_401"] as const) {
      for (const item of [0, 2, ECHO_ITEMS - 1]) {
        up.echo.answer = echoAnswer(mode, item);
        const name = `echo-${mode}-${item}`;
        const before = up.platform.labels.length;
        const bl = start(
          `${name}-bl`,
          "blackline",
          up.blacklineEnv(up.echo.url, item % 2 === 0 ? "basic" : "body"),
        );
        const vm = start(`${name}-vm`, "valimail", up.valimailEnv(up.echo.url));
        const action = up.platform.enqueueTask({
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
          () => up.platform.labels.slice(before).filter((l) => l.label === "error").length >= 2,
        );
        await waitFor(`${name} action`, finished(action));
        await collect(`${name}-bl`, bl.service, bl.stateDir);
        await collect(`${name}-vm`, vm.service, vm.stateDir);
      }
    }
  });

  it("a platform that rejects the credentials and echoes the token request", async () => {
    up.echo.answer = echoAnswer("token_401", 0);
    const { service, stateDir } = start("platform-echo", "blackline", {
      ...up.blacklineEnv(up.blackline.url, "body"),
      CONNECTOR_PLATFORM_URL: up.echo.url,
    });
    await waitFor(
      "a rejected platform token request",
      () =>
        up.echo.received.some((r) => r.target === "/auth/v1/token") &&
        service.lines.some((line) => /platform/i.test(line.message) && line.level !== "DEBUG"),
    );
    await collect("platform-echo", service, stateDir);
  });

  it("no output holds any form of a secret or token; nor does anything the platform received", () => {
    for (const upload of up.platform.uploads.values())
      up.outputs.push({ what: `upload ${upload.syncId}`, text: upload.text ?? "" });
    up.outputs.push({ what: "labels", text: JSON.stringify(up.platform.labels) });
    up.outputs.push({ what: "task finishes", text: JSON.stringify(up.platform.finishedTasks) });
    expect(up.platform.uploads.size).toBeGreaterThanOrEqual(3);
    expect(up.leaks()).toEqual([]);
    // The outputs are real: debug lines were written, and the echoes were redacted in them.
    expect(up.outputs.some((o) => o.text.includes('"level":"DEBUG"'))).toBe(true);
    expect(up.outputs.some((o) => o.text.includes("[REDACTED]"))).toBe(true);
  });
});
