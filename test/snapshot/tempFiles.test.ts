/** The registry of temporary files: what a sync registers while it runs, and when it lets go. */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { SnapshotFile, tempFiles } from "../../lib/snapshot";
import { type Job, type Page, runLocalSync, type Syncer } from "../../lib/sync";
import { makeTempDir } from "../helpers/tempDir";

/** A connector whose one job waits for `release`; `started` resolves when it runs. */
function gatedConnector(outcome: "succeed" | "fail") {
  let release = () => {};
  let started = () => {};
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const connector: Syncer = {
    name: "blackline",
    resourceTypes: () => [],
    rootJobs: () => [{ resourceType: "user", op: "list" }],
    async runJob(_job: Job): Promise<Page> {
      started();
      await gate;
      if (outcome === "fail") throw new Error("the upstream failed");
      return { records: [] };
    },
    validate: async () => ({ checks: [] }),
  };
  return { connector, running, release };
}

describe("the temporary file registry", () => {
  for (const outcome of ["succeed", "fail"] as const) {
    it(`holds the snapshot's .partial and the grant spool while a sync runs, and neither once it ${outcome}s`, async () => {
      const dir = await makeTempDir();
      const outFile = join(dir, "s.jsonl");
      const { connector, running, release } = gatedConnector(outcome);

      const run = runLocalSync({ connector, outFile, concurrency: 1, syncId: "id1" }).catch(
        (e: unknown) => e,
      );
      await running;
      const during = tempFiles().filter((path) => path.startsWith(dir));
      release();
      await run;

      expect(during.map((path) => basename(path)).sort()).toEqual([
        `.grants.id1.${process.pid}.spool`,
        ".s.jsonl.id1.partial",
      ]);
      expect(tempFiles().filter((path) => path.startsWith(dir))).toEqual([]);
      expect(await readdir(dir)).toEqual(outcome === "succeed" ? ["s.jsonl"] : []);
    });
  }

  it("registers a temporary file from the moment it is asked for, before the file exists", async () => {
    // Registered once the stream's open event came, a file a signal found between its creation
    // and that event stayed behind (the command line's SIGINT test saw the grant spool stay).
    const dir = await makeTempDir();
    const opening = SnapshotFile.open(join(dir, "s.jsonl"), "id3", "choose another path");
    const asked = tempFiles().filter((path) => path.startsWith(dir));

    const file = await opening;
    await file.abort();

    expect(asked).toEqual([join(dir, ".s.jsonl.id3.partial")]);
    expect(tempFiles().filter((path) => path.startsWith(dir))).toEqual([]);
    expect(await readdir(dir)).toEqual([]);
  });

  it("does not take a file it did not create: a temporary name already in use is left alone", async () => {
    const dir = await makeTempDir();
    const taken = join(dir, ".s.jsonl.id2.partial");
    await writeFile(taken, "another run's file");

    await expect(
      SnapshotFile.open(join(dir, "s.jsonl"), "id2", "choose another path"),
    ).rejects.toThrow(/EEXIST/);

    expect(tempFiles()).not.toContain(taken);
    expect(await readFile(taken, "utf8")).toBe("another run's file");
  });
});
