/**
 * `diff`'s temporary files on a disk that refuses writes: the error names the file and the fix
 * (`WriteFailedError`; the command exits 2, since 1 says "different"). Real failures: the report's group files and the sorted runs made
 * symlinks to `/dev/full` (ENOSPC). Before, both said `diff could not write its temporary files:
 * ENOSPC: no space left on device, write` (or EFBIG): no file named.
 */
import { existsSync } from "node:fs";
import { readdir, symlink } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { diffSnapshots, HumanReport, RunFiles } from "../../lib/diff";
import { sortSnapshot } from "../../lib/diff/sortSnapshot";
import { makeTempDir } from "../helpers/tempDir";
import { writeTenantSnapshot } from "./tenantSnapshot";

const BASE = { users: 600, teams: 30, teamsPerUser: 3 };
const EDITS = { removeUsers: Array.from({ length: 100 }, (_, n) => n), rename: [500, 501] };

/** Two snapshots of a tenant, a sync apart, in a fresh directory. */
async function snapshots(): Promise<{ dir: string; oldFile: string; newFile: string }> {
  const dir = await makeTempDir();
  const oldFile = join(dir, "old.jsonl");
  const newFile = join(dir, "new.jsonl");
  await writeTenantSnapshot(oldFile, BASE);
  await writeTenantSnapshot(newFile, { ...BASE, syncId: "s2", edits: EDITS });
  return { dir, oldFile, newFile };
}

describe("diff's temporary files on a full disk", () => {
  it.runIf(existsSync("/dev/full"))(
    "a report group's file (/dev/full): disk_full naming it",
    async () => {
      const { dir, oldFile, newFile } = await snapshots();
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

  it.runIf(existsSync("/dev/full"))("a sorted run (/dev/full): disk_full naming it", async () => {
    const { dir, oldFile } = await snapshots();
    const full = join(dir, "full.jsonl");
    await symlink("/dev/full", full);
    /** The old snapshot's runs go to /dev/full (through the symlink). */
    class RunsOnFullDisk extends RunFiles {
      override path(tag: string): string {
        return tag === "old" ? full : super.path(tag);
      }
    }
    const files = new RunsOnFullDisk(dir);

    const error = await sortSnapshot(oldFile, files, { tag: "old" }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    await files.removeAll();

    expect(error).toMatchObject({ name: "WriteFailedError", code: "disk_full", path: full });
    expect((await readdir(dir)).sort()).toEqual(["full.jsonl", "new.jsonl", "old.jsonl"]);
  });
});
