/**
 * `export` ended by a signal leaves nothing behind: not OUT's temporary file, not the c1z's temporary
 * database beside it, not the duplicate check's runs or the csv's join files in TMPDIR; OUT stays
 * as it was. Each run is
 * the built executable on a generated tenant of 12,000 users (60,000 records: two runs of the
 * check); the test waits for the temporary files to exist (a state, not a time), then signals.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { beforeAll, describe, expect, it } from "vitest";
import { writeTenantSnapshot } from "../diff/tenantSnapshot";
import { makeTempDir } from "../helpers/tempDir";

let dir: string;
let snapshot: string;
beforeAll(async () => {
  dir = await makeTempDir("ac-export-signals-");
  snapshot = join(dir, "tenant.jsonl");
  await writeTenantSnapshot(snapshot, { users: 12_000, teams: 200, teamsPerUser: 4 });
});

describe("export ended by a signal", () => {
  it.each([
    ["c1z", "SIGINT", 130],
    ["csv", "SIGTERM", 143],
  ] as const)(
    "--format %s, %s: exit %i, OUT as it was, no temporary file left",
    async (format, signal, code) => {
      const outDir = join(dir, `${format}-${signal}`);
      const tmp = join(outDir, "tmp");
      await mkdir(tmp, { recursive: true });
      const out = join(outDir, `out.${format}`);
      await writeFile(out, "the previous export");
      const child = spawn(
        process.execPath,
        ["bin/access-connectors.js", "export", snapshot, "--format", format, out],
        { env: { PATH: process.env.PATH ?? "", TMPDIR: tmp } },
      );
      let stderr = "";
      child.stderr.on("data", (chunk) => (stderr += chunk));
      child.stdout.resume();
      const exit = once(child, "close");
      const exited = exit.then(() => true);
      // For c1z the temporary database beside OUT (it finds a record twice with its own unique
      // indexes); for csv its files in TMPDIR (the join's partitions, the duplicate check's runs).
      for (;;) {
        const database = (await readdir(outDir)).some((name) => name.endsWith(".db"));
        const runs = (await readdir(tmp)).length > 0;
        if (format === "c1z" ? database : runs) break;
        if (await Promise.race([exited, sleep(20).then(() => false)]))
          throw new Error(`the export ended before its temporary files existed: ${stderr}`);
      }
      child.kill(signal);
      const [exitCode] = await exit;
      expect(exitCode, stderr).toBe(code);
      expect(await readdir(outDir)).toEqual([`out.${format}`, "tmp"]);
      expect(await readdir(tmp)).toEqual([]);
      expect(await readFile(out, "utf8")).toBe("the previous export");
    },
  );
});
