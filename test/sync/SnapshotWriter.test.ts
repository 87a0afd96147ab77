import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SyncConnector } from "../../lib/connectors/types";
import { newCounters } from "../../lib/http";
import type { Job, Page } from "../../lib/sync";
import { grant, runLocalSync, type SnapshotRecord, SnapshotWriter } from "../../lib/sync";
import { readSnapshot } from "../helpers/snapshot";
import { makeTempDir } from "../helpers/tempDir";

const user = (id: string): SnapshotRecord => ({
  kind: "resource",
  type: "user",
  id,
  displayName: `User ${id}`,
  status: "enabled",
  user: { login: `${id}@example.com`, emails: [] },
});
const team = (id: string): SnapshotRecord[] => [
  { kind: "resource", type: "team", id, displayName: `Team ${id}` },
  {
    kind: "entitlement",
    id: `team:${id}:member`,
    resource: { type: "team", id },
    slug: "member",
    displayName: `Team ${id} member`,
    purpose: "assignment",
    grantableTo: ["user"],
  },
];

describe("SnapshotWriter", () => {
  it("writes grants only when their entitlement and principal are in the snapshot, whatever the order", async () => {
    const path = join(await makeTempDir(), "s.jsonl");
    const writer = await SnapshotWriter.open({ path, syncId: "sync-1", connector: "test" });

    // A grant before its principal and entitlement, and two that name missing objects.
    await writer.write([grant("team:7:member", { type: "user", id: "1" })]);
    await writer.write([user("1"), ...team("7")]);
    await writer.write([
      grant("team:8:member", { type: "user", id: "1" }),
      grant("team:7:member", { type: "user", id: "2" }),
    ]);
    const result = await writer.complete();

    const lines = await readSnapshot(path);
    expect(lines[0]).toMatchObject({
      kind: "sync_start",
      syncId: "sync-1",
      connector: "test",
      version: 1,
    });
    expect(lines.filter((l) => l.kind === "grant").map((l) => l.id)).toEqual([
      "team:7:member:user:1",
    ]);
    expect(lines.at(-1)).toMatchObject({
      kind: "sync_end",
      status: "complete",
      counts: { resource_type: 0, resource: 2, entitlement: 1, grant: 1 },
      skipped: { dangling_grant: 2 },
    });
    expect(result.skipped.dangling_grant).toBe(2);
  });

  it("writes a record delivered twice only once", async () => {
    const path = join(await makeTempDir(), "s.jsonl");
    const writer = await SnapshotWriter.open({ path, syncId: "s", connector: "test" });

    const page = [user("1"), ...team("7"), grant("team:7:member", { type: "user", id: "1" })];
    await writer.write(page);
    await writer.write(page);
    const { counts } = await writer.complete();

    expect(counts).toEqual({ resource_type: 0, resource: 2, entitlement: 1, grant: 1 });
    expect(await readSnapshot(path)).toHaveLength(6);
  });

  it("gzips a file whose name ends in .gz and leaves no temporary file behind", async () => {
    const dir = await makeTempDir();
    const path = join(dir, "s.jsonl.gz");
    const writer = await SnapshotWriter.open({ path, syncId: "s", connector: "test" });
    await writer.write([user("Zoë")]);
    await writer.complete();

    const raw = await readFile(path);
    expect(raw.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect((await readSnapshot(path)).find((l) => l.kind === "resource")?.id).toBe("Zoë");
    expect(await readdir(dir)).toEqual(["s.jsonl.gz"]);
  });
});

describe("runLocalSync", () => {
  /** A small connector defined here: two pages of users, then a job that fails when asked to. */
  function connector(failOnPage: number | undefined): SyncConnector {
    return {
      name: "blackline",
      counters: newCounters(),
      resourceTypes: () => [
        { kind: "resource_type", id: "user", displayName: "User", traits: ["user"] },
      ],
      rootJobs: () => [{ resourceType: "user", op: "list", cursor: 1 }],
      async runJob(job: Job): Promise<Page> {
        const page = job.cursor as number;
        if (page === failOnPage) throw new Error(`page ${page} failed`);
        return { records: [user(`u${page}`)], ...(page < 3 ? { next: page + 1 } : {}) };
      },
      validate: async () => ({ checks: [] }),
    };
  }

  it("follows next cursors to the end", async () => {
    const outFile = join(await makeTempDir(), "s.jsonl");

    const summary = await runLocalSync({
      connector: connector(undefined),
      outFile,
      concurrency: 2,
    });

    expect(summary.counts.resource).toBe(3);
    expect(summary.jobs).toBe(3);
  });

  it("keeps the previous snapshot when a sync fails, and removes its temporary files", async () => {
    const dir = await makeTempDir();
    const outFile = join(dir, "s.jsonl");
    await writeFile(outFile, "previous good snapshot\n");

    await expect(
      runLocalSync({ connector: connector(2), outFile, concurrency: 2 }),
    ).rejects.toThrow("page 2 failed");

    expect(await readFile(outFile, "utf8")).toBe("previous good snapshot\n");
    expect(await readdir(dir)).toEqual(["s.jsonl"]);
  });
});
