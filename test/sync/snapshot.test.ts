import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { newRequestContext } from "../../lib/http";
import { grant, SnapshotAssembler, SnapshotFile, type SnapshotRecord } from "../../lib/snapshot";
import {
  InvalidJobError,
  type Job,
  makeJob,
  type Page,
  parseJob,
  runJob,
  runLocalSync,
  type Syncer,
} from "../../lib/sync";
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

/** The assembler writing to a snapshot file, as the local runner uses them. */
async function openSnapshot(path: string, syncId: string) {
  const file = await SnapshotFile.open(path, syncId, "choose another path");
  const assembler = await SnapshotAssembler.open({
    out: file.stream,
    spoolDir: join(path, ".."),
    syncId,
    connector: "test",
  });
  return {
    write: (records: SnapshotRecord[]) => assembler.write(records),
    async complete() {
      const result = await assembler.complete();
      await file.commit();
      return result;
    },
  };
}

describe("SnapshotAssembler to a SnapshotFile", () => {
  it("writes grants only when their entitlement and principal are in the snapshot, whatever the order", async () => {
    const path = join(await makeTempDir(), "s.jsonl");
    const writer = await openSnapshot(path, "sync-1");

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
    const writer = await openSnapshot(path, "s");

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
    const writer = await openSnapshot(path, "s");
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
  function connector(failOnPage: number | undefined): Syncer {
    return {
      name: "blackline",
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

    const { summary } = await runLocalSync({
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

describe("SnapshotAssembler to any stream", () => {
  /** An assembler writing to a PassThrough, and the lines it wrote, parsed. */
  async function toStream() {
    const spoolDir = await makeTempDir();
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on("data", (chunk: Buffer) => chunks.push(chunk));
    const assembler = await SnapshotAssembler.open({ out, spoolDir, syncId: "x", connector: "t" });
    const lines = () =>
      Buffer.concat(chunks)
        .toString("utf8")
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line) as { kind: string; id?: string });
    return { assembler, spoolDir, lines };
  }

  it("writes sync_start first and sync_end last to a plain stream, and removes its spool", async () => {
    const { assembler, spoolDir, lines } = await toStream();

    await assembler.write([
      grant("team:7:member", { type: "user", id: "1" }),
      user("1"),
      ...team("7"),
    ]);
    await assembler.complete();

    expect(lines().map((l) => l.kind)).toEqual([
      "sync_start",
      "resource",
      "resource",
      "entitlement",
      "grant",
      "sync_end",
    ]);
    expect(await readdir(spoolDir)).toEqual([]);
  });

  it("takes a page's records when handed them, not when its write's turn comes", async () => {
    const { assembler, lines } = await toStream();
    const page = [user("1"), user("2")];
    const written = assembler.write(page);
    // The caller may reuse or drop the array at once: its records are already bytes.
    page.length = 0;
    page.push(user("3"));
    await written;
    // A write once the snapshot is being completed is refused, and counts nothing.
    const completing = assembler.complete();
    await expect(assembler.write([user("4")])).rejects.toThrow("the snapshot is closed");
    const { counts } = await completing;

    expect(counts.resource).toBe(2);
    const ids = lines()
      .filter((line) => line.kind === "resource")
      .map((line) => line.id);
    expect(ids).toEqual(["1", "2"]);
  });
});

describe("runJob", () => {
  const run = { syncId: "s", connector: "blackline", connectorId: "blackline-prod" };
  const connector: Syncer = {
    name: "blackline",
    resourceTypes: () => [],
    rootJobs: () => [],
    async runJob(job: Job): Promise<Page> {
      return {
        records: [user("1")],
        next: (job.cursor as number) + 1,
        children: [{ resourceType: "team", op: "list" }],
      };
    },
    validate: async () => ({ checks: [] }),
  };

  it("returns the records and the follow-up jobs, which carry the run's identity", async () => {
    const result = await runJob(
      connector,
      makeJob(run, { resourceType: "user", op: "list", cursor: 1 }),
      newRequestContext(),
    );

    expect(result.records).toHaveLength(1);
    expect(result.followUps).toEqual([
      { v: 1, ...run, resourceType: "team", op: "list" },
      { v: 1, ...run, resourceType: "user", op: "list", cursor: 2 },
    ]);
  });

  it("refuses a message that is not a job, and a job of another connector, as InvalidJobError", async () => {
    expect(() => parseJob({ v: 1, syncId: "s", op: "list" })).toThrow(InvalidJobError);
    expect(() => parseJob({ v: 1, syncId: "s", op: "list" })).toThrow(
      /not a sync job: connector: .*; connectorId: .*; resourceType: /,
    );
    const valimailJob = makeJob(
      { ...run, connector: "valimail" },
      { resourceType: "user", op: "list" },
    );
    await expect(runJob(connector, valimailJob, newRequestContext())).rejects.toThrow(
      "user/list is a valimail job; this is the blackline connector",
    );
  });
});
