/**
 * The service's own files on a disk that refuses writes: the state file (action replies, label,
 * task finishes), the health file, the removal guard's digests. Each failure names the file, what
 * became of the work and what to free or change (`WriteFailedError`); the service keeps running.
 *
 * Real failures made without privileges (tests run as root, which writes through chmod): the
 * temporary name a file is written under (`<path>.<pid>.tmp`) made a symlink to `/dev/full`, which
 * answers every write with ENOSPC; and the built service in a child under a file size limit of 0
 * (`ulimit -f 0`), where the kernel refuses every write to a regular file with EFBIG.
 */
import { existsSync } from "node:fs";
import { readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, test } from "vitest";
import type { ActionReply } from "../../lib/actions";
import { HealthFile } from "../../lib/service/HealthFile";
import { HeldSnapshot } from "../../lib/service/HeldSnapshot";
import { ServiceState } from "../../lib/service/ServiceState";
import { startBlacklineSimulator } from "../../lib/simulators/blackline";
import { makeTempDir } from "../helpers/tempDir";
import { scenario, waitFor } from "./harness";

const silent = { debug() {}, info() {}, warn() {}, error() {} } as never;

/** Makes the next write of `path` (through its temporary name) hit a full disk. */
const fillNextWrite = (path: string) => symlink("/dev/full", `${path}.${process.pid}.tmp`);

const ENOSPC = (path: string, dir: string) =>
  `cannot write ${path}: the filesystem holding ${dir} is full (ENOSPC), so `;

describe.runIf(existsSync("/dev/full"))("the service's files on a full disk (/dev/full)", () => {
  it("the state file: the save fails naming it and the fix; the file stands; the next change saves everything", async () => {
    const dir = await makeTempDir();
    const path = join(dir, "state.json");
    const state = await ServiceState.open(path, silent);
    await state.setLabel({ label: "connected", delivered: true });
    const before = await readFile(path, "utf8");
    await fillNextWrite(path);

    const reply = { requestId: "r1", status: "succeeded" } as unknown as ActionReply;
    const error = await state.remember("fingerprint", reply).catch((caught: unknown) => caught);

    expect(error).toMatchObject({ name: "WriteFailedError", code: "disk_full", path });
    expect((error as Error).message).toBe(
      `${ENOSPC(`the service's state file ${path}`, dir)}the action replies, label and task finishes it keeps were not saved; the service keeps them in memory and saves them whole at the next change. Free space on it, or point CONNECTOR_STATE_DIR at another filesystem`,
    );
    expect(await readFile(path, "utf8")).toBe(before);
    // The temporary name is gone with the failure (here the symlink): the next save goes through.
    await state.setLabel({ label: "error", detail: "d", delivered: false });
    const saved = JSON.parse(await readFile(path, "utf8"));
    expect(Object.keys(saved.replies)).toEqual(["r1"]);
    expect(saved.label).toEqual({ label: "error", detail: "d", delivered: false });
  });

  it("the health file: the write resolves with the error naming it (never throws), the next one writes", async () => {
    const dir = await makeTempDir();
    const path = join(dir, "health.json");
    const health = new HealthFile(path);
    const state = {
      status: "ok",
      phase: "idle",
      connector: "blackline",
      hostId: "h",
      version: "1",
      startedAt: new Date(0).toISOString(),
      platform: { reachable: true },
    } as const;
    await fillNextWrite(path);

    const error = await health.write(state);

    expect(error).toMatchObject({ name: "WriteFailedError", code: "disk_full", path });
    expect((error as Error).message).toContain(
      `${ENOSPC(`the health file ${path}`, dir)}a probe sees it go stale after 60 s; the service keeps running and writes it again at the next change.`,
    );
    expect((error as Error).message).toMatch(/point CONNECTOR_HEALTH_FILE at another filesystem$/);
    expect(existsSync(path)).toBe(false);
    expect(await health.write(state)).toBeUndefined();
    expect(JSON.parse(await readFile(path, "utf8"))).toMatchObject({ status: "ok" });
  });

  it("the removal guard's digest of an upload and a release request: each names its file", async () => {
    const dir = await makeTempDir();
    const held = new HeldSnapshot(dir);
    const digest = {
      connector: "blackline",
      syncId: "s1",
      users: new BigUint64Array([1n]),
      grants: new BigUint64Array(),
    };
    const published = join(dir, "published.digest");
    await fillNextWrite(published);

    const error = await held.recordPublished(digest).catch((caught: unknown) => caught);

    expect(error).toMatchObject({ name: "WriteFailedError", code: "disk_full", path: published });
    expect((error as Error).message).toContain(
      `${ENOSPC(`the removal guard's digest of the uploaded snapshot ${published}`, dir)}the snapshot was uploaded but the next sync's removals are counted against the snapshot before it.`,
    );
    await held.recordPublished(digest);
    expect((await held.published())?.syncId).toBe("s1");

    await writeFile(join(dir, "s.jsonl.gz"), "");
    await held.hold(join(dir, "s.jsonl.gz"), { ...digest, syncId: "s2" });
    const request = join(dir, "held", "release.request");
    await fillNextWrite(request);
    const refused = await held.requestRelease("s2").catch((caught: unknown) => caught);
    expect(refused).toMatchObject({ name: "WriteFailedError", path: request });
    expect((refused as Error).message).toContain(
      "so the service was not asked to release the snapshot.",
    );
  });
});

test.runIf(existsSync("/dev/full"))(
  "the built service on a full disk: logs and reports the state file and the fix, keeps running, and syncs once it can write",
  async (context) => {
    const { platform, stateDir, start, closeLater } = await scenario(context);
    const upstream = await startBlacklineSimulator({ size: { users: 50, teams: 5, roles: 3 } });
    closeLater(() => upstream.close());
    // The shell's pid is the service's (exec): its first state and health writes hit /dev/full.
    const service = start(
      ["blackline"],
      { ...upstream.env(), CONNECTOR_SYNC_INTERVAL: "1h", STATE: stateDir },
      [
        "/bin/sh",
        "-c",
        'ln -s /dev/full "$STATE/state.json.$$.tmp" && ln -s /dev/full "$STATE/health.json.$$.tmp" && exec "$@"',
        "sh",
        process.execPath,
        "bin/access-connectors.js",
        "service",
      ],
    );
    const statePath = join(stateDir, "state.json");
    const healthPath = join(stateDir, "health.json");

    const [failure] = await waitFor("the failure logged", () => {
      const lines = service.logged(
        "a file of the service cannot be written; trying again after a wait",
      );
      return lines.length > 0 ? lines : undefined;
    });
    await waitFor("the sync after it", () => platform.uploads.size === 1);

    const stated = `cannot write the service's state file ${statePath}: the filesystem holding ${stateDir} is full (ENOSPC)`;
    expect(failure).toMatchObject({
      level: "ERROR",
      path: statePath,
      error: {
        name: "WriteFailedError",
        code: "disk_full",
        message: expect.stringContaining(stated),
      },
    });
    // The platform is told why nothing syncs, then the sync runs on the next try.
    const labels = platform.labels.map((l) => l.label);
    expect(labels.slice(0, 2)).toEqual(["error", "syncing"]);
    expect(platform.labels[0]?.detail).toContain(stated);
    expect(platform.labels[0]?.detail).toMatch(
      /point CONNECTOR_STATE_DIR at another filesystem\. No sync runs until it can be written; the service tries again after a wait\.$/,
    );
    expect(service.logged("the health file cannot be written")[0]).toMatchObject({
      path: healthPath,
      reason: expect.stringContaining(
        `cannot write the health file ${healthPath}: the filesystem holding ${stateDir} is full (ENOSPC)`,
      ),
    });
    await waitFor(
      "the health file written again",
      () => service.logged("the health file is written again").length > 0,
    );
    const stopped = await service.stop();
    expect(stopped.code).toBe(0);
    expect(service.stderr).toBe("");
  },
  30_000,
);

test("the built service under a file size limit of 0: its first write fails naming the file, no SIGXFSZ kills it", async (context) => {
  // proper-lockfile (the state directory's lock) loads signal-exit, which re-raises SIGXFSZ when
  // it is the signal's only listener: without the service's own listener the kernel's signal for
  // a write over `ulimit -f` killed the process (exit 153, nothing said) instead of EFBIG.
  const { stateDir, start, closeLater } = await scenario(context);
  const upstream = await startBlacklineSimulator({ size: { users: 5, teams: 1, roles: 1 } });
  closeLater(() => upstream.close());
  const service = start(["blackline"], { ...upstream.env(), CONNECTOR_SYNC_INTERVAL: "1h" }, [
    "/bin/sh",
    "-c",
    'ulimit -f 0 && exec "$@"',
    "sh",
    process.execPath,
    "bin/access-connectors.js",
    "service",
  ]);

  const exit = await service.exited;

  expect(exit.signal).toBeNull();
  expect(exit.code).toBe(1);
  const owner = join(stateDir, "service.lock.owner.json");
  expect(`${service.stdout}${service.stderr}`).toContain(
    `cannot write the record of which service holds the state directory ${owner}`,
  );
});
