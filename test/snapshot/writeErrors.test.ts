/**
 * A sync whose files cannot be written: the error names the file, what the system said in words
 * and what to free or change, the sync fails (exit 1), its temporary files are removed and the
 * previous snapshot stands.
 *
 * Real failures where this machine can make them without privileges: `/dev/full` answers every
 * write with ENOSPC (Linux), and a file size limit (`ulimit -f`, RLIMIT_FSIZE) makes the kernel
 * refuse a write past it with EFBIG, in a child process only. A read-only filesystem (EROFS), a
 * quota (EDQUOT) and a directory the user may not write (EACCES: tests run as root here, and root
 * writes anyway) cannot be made here: for them the message is checked on the error Node raises,
 * built by hand.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createWriteStream, existsSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BlacklineSimulator, startBlacklineSimulator } from "../../lib/simulators/blackline";
import { grant, SnapshotAssembler, type SnapshotRecord } from "../../lib/snapshot";
import { WriteFailedError, writeFailure } from "../../lib/sync/errors";
import { bundleScript } from "../helpers/bundleScript";
import { runUnderFileSizeLimit } from "../helpers/fileSizeLimit";
import { makeTempDir } from "../helpers/tempDir";

const users = (from: number, count: number): SnapshotRecord[] =>
  Array.from({ length: count }, (_, n) => ({
    kind: "resource",
    type: "user",
    id: `u${from + n}`,
    displayName: `User ${from + n}`,
  }));

describe("SnapshotAssembler on a full disk", () => {
  it.runIf(existsSync("/dev/full"))(
    "fails with disk_full naming the snapshot's file and the fix, and removes its spool",
    async () => {
      const spoolDir = await makeTempDir();
      const assembler = await SnapshotAssembler.open({
        out: createWriteStream("/dev/full"),
        outFile: { what: "the new snapshot", path: "/dev/full", elsewhere: "choose another --out" },
        spoolDir,
        syncId: "full",
        connector: "test",
      });

      const run = async () => {
        for (let page = 0; page < 20; page++) {
          await assembler.write([
            ...users(page * 500, 500),
            grant("team:1:member", { type: "user", id: `u${page}` }),
          ]);
        }
        await assembler.complete();
      };
      const error = await run().catch((caught: unknown) => caught);
      await assembler.abort();

      expect(error).toBeInstanceOf(WriteFailedError);
      expect(error).toMatchObject({ code: "disk_full", path: "/dev/full" });
      expect((error as Error).message).toBe(
        "cannot write the new snapshot /dev/full: the filesystem holding /dev is full (ENOSPC), so the sync stopped and nothing was published; the previous snapshot stands. Free space on it (a sync needs room for its snapshot and, while it runs, its grants again), or choose another --out",
      );
      expect(await readdir(spoolDir)).toEqual([]);
    },
  );
});

describe("writeFailure: the errors this machine cannot make", () => {
  const file = { what: "the grant spool", path: "/data/.grants.x.1.spool", elsewhere: "move it" };
  /** An error as Node's fs raises it: no path on a write, only the errno code. */
  const systemError = (code: string, text: string) =>
    Object.assign(new Error(`${code}: ${text}, write`), { code, errno: -1, syscall: "write" });

  it.each([
    ["EROFS", "read-only file system", "read_only", "the filesystem holding /data is read-only"],
    [
      "EDQUOT",
      "disk quota exceeded",
      "disk_full",
      "this user's disk quota on the filesystem holding /data is used up",
    ],
    ["EACCES", "permission denied", "no_permission", "this process may not write in /data"],
    ["EIO", "i/o error", "write_failed", "the system refused the write: EIO: i/o error, write"],
  ])("%s: code %s… names the file, the cause and the fix", (errno, text, code, cause) => {
    const error = writeFailure(systemError(errno, text), file);

    expect(error).toMatchObject({ code: code, path: file.path });
    expect((error as Error).message).toContain(
      `cannot write the grant spool ${file.path}: ${cause} (${errno})`,
    );
    expect((error as Error).message).toMatch(/or move it$/);
  });

  it("leaves an error that is not the system's as it is", () => {
    const error = new Error("the snapshot is closed");
    expect(writeFailure(error, file)).toBe(error);
  });
});

describe("sync through the executable past a file size limit (EFBIG)", () => {
  let sim: BlacklineSimulator;
  beforeAll(async () => {
    sim = await startBlacklineSimulator({ seed: 3, size: { users: 3_000, teams: 60, roles: 5 } });
  });
  afterAll(() => sim.close());

  const PREVIOUS = '{"kind":"sync_start","note":"the previous snapshot"}\n';

  for (const name of ["blackline.sync.jsonl", "blackline.sync.jsonl.gz"]) {
    it(`${name}: exit 1 naming the file, the limit and --out; no temporary file left, the previous snapshot unchanged`, async () => {
      const dir = await makeTempDir();
      const out = join(dir, name);
      await writeFile(out, PREVIOUS);
      // sh's ulimit -f counts blocks of 512 bytes: 64 KiB, less than the snapshot or its spool.
      const child = spawn(
        "/bin/sh",
        [
          "-c",
          'ulimit -f 128 && exec "$@"',
          "sh",
          process.execPath,
          "bin/access-connectors.js",
          "sync",
          "blackline",
          "--out",
          out,
        ],
        {
          stdio: ["ignore", "ignore", "pipe"],
          env: { PATH: process.env.PATH ?? "", ...sim.env() },
        },
      );
      let stderr = "";
      child.stderr.on("data", (chunk) => (stderr += chunk));
      // A sync that would wait for ever on a stream that failed fails here, not by the test's timeout.
      const stuck = setTimeout(() => child.kill("SIGKILL"), 60_000);
      // "close": the exit, and stderr read to its end (it can still come in after "exit").
      const [code, signal] = await once(child, "close");
      clearTimeout(stuck);

      expect({ code, signal }).toEqual({ code: 1, signal: null });
      const named = /error: cannot write (the new snapshot|the grant spool) (\S+): (.*)/.exec(
        stderr,
      );
      expect(named, stderr).not.toBeNull();
      expect(named?.[2]?.startsWith(join(dir, "."))).toBe(true);
      expect(named?.[3]).toBe(
        "the file reached the largest size this process may write (its file size limit, ulimit -f) or the filesystem allows (EFBIG), so the sync stopped and nothing was published; the previous snapshot stands. Raise the limit, or write the snapshot on another filesystem (--out of `access-connectors sync`, CONNECTOR_STATE_DIR of the service)",
      );
      expect(await readdir(dir)).toEqual([name]);
      expect(await readFile(out, "utf8")).toBe(PREVIOUS);
    }, 90_000);
  }
});

describe("a gzip snapshot whose file stops (EFBIG) under the assembler", () => {
  it("fails naming the file (the file's error used to go unheard and crash the process)", async () => {
    // SnapshotFile and the assembler as runLocalSync joins them, bundled into a script that
    // writes pages of users (no grants: the spool stays empty) under a file size limit of 64 KiB.
    const dir = await makeTempDir();
    const script = join(dir, "gzip.mjs");
    bundleScript(
      `
          import { randomBytes } from "node:crypto";
          import { SnapshotAssembler } from "./lib/snapshot/SnapshotAssembler";
          import { SnapshotFile } from "./lib/snapshot/SnapshotFile";
          const file = await SnapshotFile.open(${JSON.stringify(join(dir, "s.jsonl.gz"))}, "t", "choose another --out");
          const assembler = await SnapshotAssembler.open({ out: file.stream, outFile: file.file, spoolDir: ${JSON.stringify(dir)}, syncId: "t", connector: "test" });
          try {
            for (let page = 0; page < 100; page++) {
              // Random ids: gzip cannot shrink them much, so the file passes the limit.
              await assembler.write(Array.from({ length: 200 }, () => ({ kind: "resource", type: "user", id: randomBytes(24).toString("hex"), displayName: "x" })));
            }
            await assembler.complete();
            await file.commit();
            console.log("no error");
          } catch (error) {
            await assembler.abort();
            await file.abort();
            console.log(error.code, error.message);
          }
        `,
      script,
    );

    const stdout = await runUnderFileSizeLimit(script, 128);

    expect(stdout).toMatch(
      new RegExp(
        `^write_failed cannot write the new snapshot ${join(dir, ".s.jsonl.gz.t.partial")}: the file reached .* \\(EFBIG\\)`,
      ),
    );
    expect((await readdir(dir)).sort()).toEqual(["gzip.mjs"]);
  }, 90_000);
});
