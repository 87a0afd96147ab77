/**
 * `diff`'s temporary files on a disk that refuses writes: the error names the file and the fix
 * (`WriteFailedError`, exit 1) and nothing crashes. Real failures: the report's group files made
 * symlinks to `/dev/full` (ENOSPC), and the sorted runs past a file size limit (`ulimit -f`,
 * EFBIG) in a child process. Before, both said `diff could not write its temporary files:
 * ENOSPC: no space left on device, write` (or EFBIG): no file named.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, symlink } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { diffSnapshots, HumanReport, RunFiles } from "../../lib/diff";
import { bundleScript } from "../helpers/bundleScript";
import { makeTempDir } from "../helpers/tempDir";
import { writeTenantSnapshot } from "./tenantSnapshot";

const BASE = { users: 2_000, teams: 30, teamsPerUser: 3 };
const EDITS = { removeUsers: Array.from({ length: 300 }, (_, n) => n), rename: [500, 501] };

describe("diff's temporary files on a full disk", () => {
  it.runIf(existsSync("/dev/full"))(
    "a report group's file (/dev/full): disk_full naming it",
    async () => {
      const dir = await makeTempDir();
      const oldFile = join(dir, "old.jsonl");
      const newFile = join(dir, "new.jsonl");
      await writeTenantSnapshot(oldFile, BASE);
      await writeTenantSnapshot(newFile, { ...BASE, syncId: "s2", edits: EDITS });
      const full = join(dir, "full.jsonl");
      await symlink("/dev/full", full);
      /** The report's group files go to /dev/full (through the symlink); the runs as usual. */
      class ReportOnFullDisk extends RunFiles {
        override path(tag: string): string {
          return tag.startsWith("report-") ? full : super.path(tag);
        }
      }
      const files = new ReportOnFullDisk(dir);
      const report = new HumanReport(files);

      const error = await diffSnapshots(oldFile, newFile, report.sink, { tempDir: dir }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      report.close();
      await files.removeAll();

      expect(error).toMatchObject({ name: "WriteFailedError", code: "disk_full", path: full });
      expect((error as Error).message).toBe(
        `cannot write a temporary file of diff ${full}: the filesystem holding ${dir} is full (ENOSPC), so the diff stopped and its temporary files are removed. Free space on it, or set TMPDIR to a directory on a filesystem with room`,
      );
      expect((await readdir(dir)).sort()).toEqual(["full.jsonl", "new.jsonl", "old.jsonl"]);
    },
  );

  it("a sorted run past a file size limit (EFBIG): write_failed naming the run", async () => {
    const dir = await makeTempDir();
    const oldFile = join(dir, "old.jsonl");
    const newFile = join(dir, "new.jsonl");
    await writeTenantSnapshot(oldFile, BASE);
    await writeTenantSnapshot(newFile, { ...BASE, syncId: "s2", edits: EDITS });
    const script = join(dir, "diff.mjs");
    bundleScript(
      `
        import { readdirSync } from "node:fs";
        import { diffSnapshots, HumanReport, RunFiles } from "./lib/diff";
        const dir = ${JSON.stringify(dir)};
        const files = new RunFiles(dir);
        const report = new HumanReport(files);
        try {
          await diffSnapshots(${JSON.stringify(oldFile)}, ${JSON.stringify(newFile)}, report.sink, { tempDir: dir });
          console.log(JSON.stringify({ ok: true }));
        } catch (error) {
          report.close();
          await files.removeAll();
          console.log(JSON.stringify({ name: error.name, code: error.code, path: error.path, message: error.message, left: readdirSync(dir).sort() }));
        }
      `,
      script,
    );

    // 8 KiB: less than a run of 2,000 users.
    const { stdout } = await promisify(execFile)(
      "/bin/sh",
      ["-c", 'ulimit -f 16 && exec "$@"', "sh", process.execPath, script],
      { timeout: 30_000 },
    );

    const result = JSON.parse(stdout);
    expect(result).toMatchObject({
      name: "WriteFailedError",
      code: "write_failed",
      left: ["diff.mjs", "new.jsonl", "old.jsonl"],
    });
    expect(result.path).toMatch(
      new RegExp(`^${dir}/access-connectors-diff-\\d+-[0-9a-f]{8}-\\w+-\\d+\\.jsonl$`),
    );
    expect(result.message).toBe(
      `cannot write a temporary file of diff ${result.path}: the file reached the largest size this process may write (its file size limit, ulimit -f) or the filesystem allows (EFBIG), so the diff stopped and its temporary files are removed. Raise the limit, or set TMPDIR to a directory on a filesystem with room`,
    );
  }, 40_000);
});
