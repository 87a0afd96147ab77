// The mass-deletion guard in the self-hosted service (the built executable against the platform
// simulator): a tenant that shrinks between two syncs is held (nothing uploaded, label `error`
// saying why and how to release), and `access-connectors release --service`, run beside the
// service with its state directory, has the service upload the held snapshot as it is.
import { stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "vitest";
import { HeldSnapshot } from "../../lib/service/HeldSnapshot";
import { type BlacklineSimulator, startBlacklineSimulator } from "../../lib/simulators/blackline";
import { cli } from "../helpers/cli";
import { scenario, waitFor } from "./harness";

const SIZE = { teams: 20, roles: 6 };

/** The upstream's variables, in an env file the service reads again before each sync. */
function envFileText(sim: BlacklineSimulator): string {
  const vars = { ...sim.env(), CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0" };
  return Object.entries(vars)
    .map(([name, value]) => `${name}=${value}\n`)
    .join("");
}

const usersIn = (text: string | undefined) =>
  (text ?? "").split("\n").filter((line) => line.includes('"kind":"resource","type":"user"'))
    .length;

describe("access-connectors service: the removal guard", () => {
  test("a shrunken tenant is held (no upload, label error with the reason and the release command); release --service uploads it", async (context) => {
    const { expect } = context;
    const { platform, stateDir, start, health, closeLater } = await scenario(context);
    const full = await startBlacklineSimulator({ seed: 5, size: { users: 300, ...SIZE } });
    const shrunk = await startBlacklineSimulator({ seed: 5, size: { users: 200, ...SIZE } });
    closeLater(() => full.close());
    closeLater(() => shrunk.close());
    const envFile = join(stateDir, "upstream.env");
    await writeFile(envFile, envFileText(full));
    const service = start(["blackline", "--env-file", envFile], { CONNECTOR_SYNC_INTERVAL: "1h" });

    await waitFor("the first sync uploaded", () => service.logged("sync uploaded").length === 1);
    expect(platform.uploads.size).toBe(1);

    // The tenant loses 100 of its 300 users; a sync task runs a sync now.
    await writeFile(envFile, envFileText(shrunk));
    const heldTask = platform.enqueueTask({ type: "sync" });
    const heldFinish = await waitFor("the held sync's task finished", () =>
      platform.finishedTasks.find((t) => t.id === heldTask),
    );
    expect(heldFinish).toMatchObject({
      status: "failed",
      error: { code: "snapshot_held", retryable: false },
    });
    expect(platform.uploads.size).toBe(1);
    const label = platform.labels.at(-1);
    expect(label?.label).toBe("error");
    expect(label?.detail).toMatch(
      /^The new snapshot was held, not uploaded: it removes 100 of 300 users \(33\.3%\) and [\d,]+ of [\d,]+ grants \([\d.]+%\); the limit is 30% \(CONNECTOR_MAX_REMOVAL_PERCENT\)\. If BlackLine really lost them, publish it as it is: run `access-connectors release --service` on the connector host/,
    );
    expect(label?.detail).toMatch(/the next sync starts at \d{4}-/);
    const [held] = service.logged("sync held: the snapshot removes too much; nothing was uploaded");
    expect(held).toMatchObject({ users: { previous: 300, removed: 100 }, limitPercent: 30 });
    expect(await stat(join(stateDir, "held", "snapshot.jsonl.gz"))).toBeTruthy();
    const heldSyncId = held?.syncId as string;
    await waitFor("the health file to say held", async () => {
      const report = await health();
      return report.lastSync?.outcome === "held" && report.status === "degraded";
    });

    // The administrator releases it: the running service uploads it as it is.
    const release = await cli(["release", "--service"], { CONNECTOR_STATE_DIR: stateDir });
    expect(release.stderr).toContain(`asked the service to upload held sync ${heldSyncId}`);
    expect(release.code).toBe(0);
    expect(release.stdout).toMatch(new RegExp(`^released blackline sync ${heldSyncId}: uploaded`));
    expect(platform.uploads.size).toBe(2);
    expect(usersIn(platform.uploads.get(heldSyncId)?.text)).toBe(200);
    // The service answers the release before it reports the label and logs: wait for its log line.
    await waitFor("the service to log the release", () =>
      service.logged("held snapshot released and uploaded").length === 1 ? true : undefined,
    );
    expect(platform.labels.at(-1)?.label).toBe("connected");
    await expect(stat(join(stateDir, "held"))).rejects.toThrow();

    // The released snapshot is the one the next sync is compared with: nothing removed now.
    const nextTask = platform.enqueueTask({ type: "sync" });
    const nextFinish = await waitFor("the next sync's task finished", () =>
      platform.finishedTasks.find((t) => t.id === nextTask),
    );
    expect(nextFinish.status).toBe("succeeded");
    expect(service.logged("sync uploaded").at(-1)).toMatchObject({
      guard: { basis: "within", users: { previous: 200, removed: 0 } },
    });
    expect(platform.uploads.size).toBe(3);

    const nothing = await cli(["release", "--service"], { CONNECTOR_STATE_DIR: stateDir });
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain(`CONNECTOR_STATE_DIR: nothing is held in ${stateDir}`);
    expect((await service.stop()).code).toBe(0);
  });

  test("a later sync within the limit supersedes the held snapshot; a stale release is answered superseded", async (context) => {
    const { expect } = context;
    const { platform, stateDir, start, closeLater } = await scenario(context);
    const full = await startBlacklineSimulator({ seed: 5, size: { users: 300, ...SIZE } });
    const shrunk = await startBlacklineSimulator({ seed: 5, size: { users: 200, ...SIZE } });
    closeLater(() => full.close());
    closeLater(() => shrunk.close());
    const envFile = join(stateDir, "upstream.env");
    await writeFile(envFile, envFileText(full));
    const service = start(["blackline", "--env-file", envFile], { CONNECTOR_SYNC_INTERVAL: "1h" });
    await waitFor("the first sync uploaded", () => service.logged("sync uploaded").length === 1);

    await writeFile(envFile, envFileText(shrunk));
    const heldTask = platform.enqueueTask({ type: "sync" });
    await waitFor("held", () => platform.finishedTasks.find((t) => t.id === heldTask));
    const files = new HeldSnapshot(stateDir);
    const heldSyncId = (await files.held())?.syncId;
    await files.requestRelease("an-older-sync");
    const stale = await waitFor("the stale request answered", () =>
      files.releaseAnswer("an-older-sync"),
    );
    expect(stale).toMatchObject({
      status: "superseded",
      detail: `sync ${heldSyncId} is held now, not an-older-sync; release again to upload it`,
    });
    expect(platform.uploads.size).toBe(1);
    await writeFile(envFile, envFileText(full));
    const passTask = platform.enqueueTask({ type: "sync" });
    const pass = await waitFor("passed", () =>
      platform.finishedTasks.find((t) => t.id === passTask),
    );
    expect(pass.status).toBe("succeeded");
    expect(platform.uploads.size).toBe(2);
    expect(platform.labels.at(-1)?.label).toBe("connected");
    await expect(stat(join(stateDir, "held"))).rejects.toThrow();
    expect((await service.stop()).code).toBe(0);
  });
});
