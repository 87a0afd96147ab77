/**
 * The service's own files when the system refuses a write: the state file (action replies, label,
 * task finishes), the health file, the removal guard's digests. Each failure names the file, what
 * became of the work and what to free or change (`WriteFailedError`); the service keeps running.
 * And the temporary name they are written under (`<path>.<pid>.tmp`) is created exclusively: a
 * file or symlink planted there is never followed.
 *
 * Real failures made without privileges (tests run as root, which writes through chmod, and a
 * symlink to /dev/full under the temporary name is no longer followed): a file size limit of 0 set
 * on a child process with `prlimit` (util-linux), where the kernel refuses every write to a regular
 * file with EFBIG (the process ignores SIGXFSZ, as the service does), lifted again with `prlimit`
 * to show the next write goes through. The in-process kinds run in a child bundled from this
 * repository's modules; the built service gets the limit while it runs. The ENOSPC wording of
 * the same messages is tested through /dev/full on a sync's files (test/snapshot/writeErrors.test.ts).
 */
import { execFile, execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { lstat, mkdir, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it, test } from "vitest";
import { HeldSnapshot } from "../../lib/service/HeldSnapshot";
import { ServiceState } from "../../lib/service/ServiceState";
import { writeWhole } from "../../lib/service/writeWhole";
import { startBlacklineSimulator } from "../../lib/simulators/blackline";
import { bundleScript } from "../helpers/bundleScript";
import { makeTempDir } from "../helpers/tempDir";
import { scenario, waitFor } from "./harness";

const silent = { debug() {}, info() {}, warn() {}, error() {} } as never;

/** Sets the file size limit (soft; the hard one stays) of the process `pid`: "0" or "unlimited". */
const fileSizeLimit = (pid: number, limit: "0" | "unlimited") =>
  execFileSync("prlimit", ["--pid", String(pid), `--fsize=${limit}:unlimited`]);

/**
 * Runs `body` (TypeScript; the repository's modules imported by paths from its root) in a child
 * process where `limit()` and `lift()` set its file size limit to 0 and back, `caught(promise)`
 * gives a rejection's name, code, path and message, and whatever is put in `out` is returned.
 */
async function inChild(body: string): Promise<Record<string, unknown>> {
  const script = join(await makeTempDir(), "child.mjs");
  bundleScript(
    `
      import { execFileSync } from "node:child_process";
      process.on("SIGXFSZ", () => {});
      const setLimit = (limit) => execFileSync("prlimit", ["--pid", String(process.pid), "--fsize=" + limit + ":unlimited"]);
      const limit = () => setLimit("0");
      const lift = () => setLimit("unlimited");
      const caught = (promise) => promise.then(() => "resolved", (e) => ({ name: e.name, code: e.code, path: e.path, message: e.message }));
      const out = {};
      ${body}
      console.log(JSON.stringify(out));
    `,
    script,
  );
  const { stdout } = await promisify(execFile)(process.execPath, [script], { timeout: 30_000 });
  return JSON.parse(stdout) as Record<string, unknown>;
}

const EFBIG = (path: string) =>
  `cannot write ${path}: the file reached the largest size this process may write (its file size limit, ulimit -f) or the filesystem allows (EFBIG), so `;

describe.runIf(process.platform === "linux")(
  "the service's files under a file size limit of 0 (EFBIG)",
  () => {
    it("the state file: the save fails naming it and the fix; the file stands; the next change saves everything", async () => {
      const dir = await makeTempDir();
      const path = join(dir, "state.json");
      const prepared = await ServiceState.open(path, silent);
      await prepared.setLabel({ label: "connected", delivered: true });
      const before = await readFile(path, "utf8");

      const out = await inChild(`
        import { readdirSync, readFileSync } from "node:fs";
        import { ServiceState } from "./lib/service/ServiceState";
        const silent = { debug() {}, info() {}, warn() {}, error() {} };
        const state = await ServiceState.open(${JSON.stringify(path)}, silent);
        limit();
        out.error = await caught(state.remember("fingerprint", { requestId: "r1", status: "succeeded" }));
        out.files = readdirSync(${JSON.stringify(dir)});
        out.text = readFileSync(${JSON.stringify(path)}, "utf8");
        lift();
        await state.setLabel({ label: "error", detail: "d", delivered: false });
      `);

      expect(out.error).toEqual({
        name: "WriteFailedError",
        code: "write_failed",
        path,
        message: `${EFBIG(`the service's state file ${path}`)}the action replies, label and task finishes it keeps were not saved; the service keeps them in memory and saves them whole at the next change. Raise the limit, or point CONNECTOR_STATE_DIR at another filesystem`,
      });
      // The file stands and the temporary file is gone with the failure.
      expect(out.files).toEqual(["state.json"]);
      expect(out.text).toBe(before);
      const saved = JSON.parse(await readFile(path, "utf8"));
      expect(Object.keys(saved.replies)).toEqual(["r1"]);
      expect(saved.label).toEqual({ label: "error", detail: "d", delivered: false });
    });

    it("the health file: the write resolves with the error naming it (never throws), the next one writes", async () => {
      const dir = await makeTempDir();
      const path = join(dir, "health.json");

      const out = await inChild(`
        import { existsSync, readdirSync } from "node:fs";
        import { HealthFile } from "./lib/service/HealthFile";
        const health = new HealthFile(${JSON.stringify(path)});
        const state = { status: "ok", phase: "idle", connector: "blackline", hostId: "h", version: "1", startedAt: new Date(0).toISOString(), platform: { reachable: true } };
        limit();
        const error = await health.write(state);
        out.error = { name: error.name, code: error.code, path: error.path, message: error.message };
        out.files = readdirSync(${JSON.stringify(dir)});
        lift();
        out.next = (await health.write(state)) ?? "written";
      `);

      expect(out.error).toMatchObject({ name: "WriteFailedError", code: "write_failed", path });
      const message = (out.error as { message: string }).message;
      expect(message).toContain(
        `${EFBIG(`the health file ${path}`)}a probe sees it go stale after 60 s; the service keeps running and writes it again at the next change.`,
      );
      expect(message).toMatch(/point CONNECTOR_HEALTH_FILE at another filesystem$/);
      expect(out.files).toEqual([]);
      expect(out.next).toBe("written");
      expect(JSON.parse(await readFile(path, "utf8"))).toMatchObject({ status: "ok" });
    });

    it("the removal guard's digest of an upload and a release request: each names its file", async () => {
      const dir = await makeTempDir();
      const published = join(dir, "published.digest");
      const request = join(dir, "held", "release.request");
      await writeFile(join(dir, "s.jsonl.gz"), "");

      const out = await inChild(`
        import { HeldSnapshot } from "./lib/service/HeldSnapshot";
        const held = new HeldSnapshot(${JSON.stringify(dir)});
        const digest = { connector: "blackline", syncId: "s1", users: new BigUint64Array([1n]), grants: new BigUint64Array() };
        limit();
        out.published = await caught(held.recordPublished(digest));
        lift();
        await held.recordPublished(digest);
        await held.hold(${JSON.stringify(join(dir, "s.jsonl.gz"))}, { ...digest, syncId: "s2" });
        limit();
        out.request = await caught(held.requestRelease("s2"));
      `);

      expect(out.published).toMatchObject({
        name: "WriteFailedError",
        code: "write_failed",
        path: published,
      });
      expect((out.published as { message: string }).message).toContain(
        `${EFBIG(`the removal guard's digest of the uploaded snapshot ${published}`)}the snapshot was uploaded but the next sync's removals are counted against the snapshot before it.`,
      );
      expect((await new HeldSnapshot(dir).published())?.syncId).toBe("s1");
      expect(out.request).toMatchObject({ name: "WriteFailedError", path: request });
      expect((out.request as { message: string }).message).toContain(
        "so the service was not asked to release the snapshot.",
      );
    });
  },
);

describe("the temporary name a file is written under", () => {
  const fileIn = (dir: string) => ({
    what: "the test's file",
    path: join(dir, "file.json"),
    elsewhere: "write it elsewhere",
  });

  it("a symlink planted there is not followed: its target stays as it was, the write succeeds", async () => {
    const dir = await makeTempDir();
    const file = fileIn(dir);
    const victim = join(dir, "victim");
    await writeFile(victim, "the victim's own\n");
    await symlink(victim, `${file.path}.${process.pid}.tmp`);
    // A dangling symlink, too: writing through it would create its target.
    const other = fileIn(join(dir, "other"));
    await mkdir(join(dir, "other"));
    const absent = join(dir, "absent");
    await symlink(absent, `${other.path}.${process.pid}.tmp`);

    await writeWhole(file, "new\n");
    await writeWhole(other, "other\n");

    expect(await readFile(victim, "utf8")).toBe("the victim's own\n");
    expect(existsSync(absent)).toBe(false);
    expect((await lstat(file.path)).isFile()).toBe(true);
    expect(await readFile(file.path, "utf8")).toBe("new\n");
    expect(await readFile(other.path, "utf8")).toBe("other\n");
    expect((await readdir(dir)).sort()).toEqual(["file.json", "other", "victim"]);
    expect(await readdir(join(dir, "other"))).toEqual(["file.json"]);
  });

  it("a stale temporary file (a crashed process with the same pid) is replaced by a new one with the file's mode", async () => {
    const dir = await makeTempDir();
    const file = fileIn(dir);
    await writeFile(`${file.path}.${process.pid}.tmp`, "stale and longer than the data", {
      mode: 0o666,
    });

    await writeWhole(file, "fresh\n", 0o600);

    expect(await readFile(file.path, "utf8")).toBe("fresh\n");
    expect((await stat(file.path)).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(["file.json"]);
  });
});

test.runIf(process.platform === "linux")(
  "the built service whose files cannot be written (a file size limit of 0 set while it runs): logs and reports the state file and the fix, keeps running, and syncs once it can write",
  async (context) => {
    const { platform, stateDir, start, closeLater } = await scenario(context);
    const upstream = await startBlacklineSimulator({ size: { users: 50, teams: 5, roles: 3 } });
    closeLater(() => upstream.close());
    const service = start(["blackline"], { ...upstream.env(), CONNECTOR_SYNC_INTERVAL: "1h" });
    const pid = service.child.pid as number;
    // The upload lands before the service saves its `connected` label to its state file and then
    // reports it: waiting for the label keeps that save out of the limit's reach (under load it
    // came after the limit was set, and the failure was that sync's, not the sync task's).
    await waitFor(
      "the first sync",
      () => platform.uploads.size === 1 && platform.labels.at(-1)?.label === "connected",
    );
    // From here every write to a regular file fails with EFBIG; a sync task makes the service
    // write its state (the label) and health files.
    fileSizeLimit(pid, "0");
    platform.enqueueTask({ type: "sync" });
    const statePath = join(stateDir, "state.json");
    const healthPath = join(stateDir, "health.json");

    const [failure] = await waitFor("the failure logged", () => {
      const lines = service.logged(
        "a file of the service cannot be written; trying again after a wait",
      );
      return lines.length > 0 ? lines : undefined;
    });
    await waitFor(
      "the health file's failure logged",
      () => service.logged("the health file cannot be written").length > 0,
    );
    fileSizeLimit(pid, "unlimited");
    await waitFor("the sync after it", () => platform.uploads.size === 2);

    const stated = `cannot write the service's state file ${statePath}: the file reached the largest size this process may write (its file size limit, ulimit -f) or the filesystem allows (EFBIG)`;
    expect(failure).toMatchObject({
      level: "ERROR",
      path: statePath,
      error: {
        name: "WriteFailedError",
        code: "write_failed",
        message: expect.stringContaining(stated),
      },
    });
    // The platform is told why nothing syncs, then the sync runs on the next try.
    const errorLabel = platform.labels.find((l) => l.label === "error");
    expect(errorLabel?.detail).toContain(stated);
    expect(errorLabel?.detail).toMatch(
      /point CONNECTOR_STATE_DIR at another filesystem\. No sync runs until it can be written; the service tries again after a wait\.$/,
    );
    expect(service.logged("the health file cannot be written")[0]).toMatchObject({
      path: healthPath,
      reason: expect.stringContaining(
        `cannot write the health file ${healthPath}: the file reached`,
      ),
    });
    await waitFor(
      "the health file written again",
      () => service.logged("the health file is written again").length > 0,
    );
    const stopped = await service.stop();
    expect(stopped.code).toBe(0);
    expect(service.stderr).toBe("");
    expect((await readdir(stateDir)).filter((name) => name.endsWith(".tmp"))).toEqual([]);
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
