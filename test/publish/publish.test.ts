// The guarded publish of lib/publish, with a store kept in memory (the runtimes' stores, files
// beside --out, the service's state directory and S3, are exercised end to end in
// test/cli/guard.test.ts, test/service/guard.test.ts and test/aws/guard.ts (run by test/aws/cloud.test.ts)).
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SnapshotDigest } from "../../lib/guard";
import { type GuardStore, publishGuarded, publishHeld } from "../../lib/publish";
import { makeTempDir } from "../helpers/tempDir";

/** A complete snapshot of users u0..u{users-1}, each with one grant. */
async function snapshotFile(syncId: string, users: number): Promise<string> {
  const at = "2026-11-25T10:00:00Z";
  const lines: Record<string, unknown>[] = [
    { kind: "sync_start", syncId, connector: "blackline", startedAt: at, version: 1 },
  ];
  for (let i = 0; i < users; i++) {
    const user = { login: `u${i}@example.com`, emails: [`u${i}@example.com`] };
    lines.push({ kind: "resource", type: "user", id: `u${i}`, displayName: `U${i}`, user });
    const principal = { type: "user", id: `u${i}` };
    lines.push({ kind: "grant", id: `g${i}`, entitlement: "team:1:member", principal });
  }
  const counts = { resource_type: 0, resource: users, entitlement: 0, grant: users };
  const skipped = { dangling_grant: 0 };
  lines.push({ kind: "sync_end", syncId, status: "complete", finishedAt: at, counts, skipped });
  const path = join(await makeTempDir(), `${syncId}.jsonl`);
  await writeFile(path, lines.map((line) => `${JSON.stringify(line)}\n`).join(""));
  return path;
}

/** A store in memory; `keepsDigests: false` is a store like the CLI's, with no recordPublished. */
function memoryStore(options: { keepsDigests: boolean }) {
  const kept = {
    published: undefined as SnapshotDigest | undefined,
    held: undefined as { file: string; digest: SnapshotDigest } | undefined,
    calls: [] as string[],
  };
  const store: GuardStore = {
    published: async () => kept.published,
    hold: async (file, digest) => {
      kept.calls.push(`hold ${digest.syncId}`);
      kept.held = { file, digest };
    },
    held: async () => kept.held?.digest,
    withHeldSnapshot: (use) => use(kept.held?.file as string),
    ...(options.keepsDigests && {
      recordPublished: async (digest: SnapshotDigest) => {
        kept.calls.push(`record ${digest.syncId}`);
        kept.published = digest;
        kept.held = undefined;
      },
    }),
  };
  return { store, kept };
}

/** A publisher that records what it was given. */
function publisher(fail?: Error) {
  const published: string[] = [];
  const publish = async (file: string, syncId: string) => {
    if (fail) throw fail;
    published.push(syncId);
    return { file, syncId };
  };
  return { published, publish };
}

/** The guarded publish of a new snapshot of `users` users, at a limit of 30%. */
async function step(
  syncId: string,
  users: number,
  { store, publish }: { store: GuardStore; publish: ReturnType<typeof publisher>["publish"] },
) {
  const file = await snapshotFile(syncId, users);
  return {
    file,
    outcome: await publishGuarded({ snapshotFile: file, syncId, limit: 30, store, publish }),
  };
}

describe("publishGuarded", () => {
  it("publishes a first snapshot and records its digest; the next one is judged against it", async () => {
    const { store, kept } = memoryStore({ keepsDigests: true });
    const { published, publish } = publisher();
    const first = (await step("s1", 10, { store, publish })).outcome;
    expect(first).toMatchObject({ held: false, verdict: { basis: "first" } });
    expect(kept.published?.users).toHaveLength(10);

    const second = (await step("s2", 8, { store, publish })).outcome;
    expect(second).toMatchObject({
      held: false,
      verdict: { basis: "within", users: { previous: 10, removed: 2 } },
      published: { syncId: "s2" },
    });
    expect(published).toEqual(["s1", "s2"]);
    expect(kept.calls).toEqual(["record s1", "record s2"]);
  });

  it("holds a snapshot over the limit: kept in the store, nothing published or recorded", async () => {
    const { store, kept } = memoryStore({ keepsDigests: true });
    const { published, publish } = publisher();
    await step("s1", 10, { store, publish });
    const { file, outcome } = await step("s2", 6, { store, publish });
    expect(outcome).toMatchObject({
      held: true,
      verdict: { basis: "over", users: { removed: 4 } },
    });
    expect(published).toEqual(["s1"]);
    expect(kept.held).toMatchObject({ file, digest: { syncId: "s2" } });
    expect(kept.published?.syncId).toBe("s1");
  });

  it("a failed publish records nothing and is thrown", async () => {
    const { store, kept } = memoryStore({ keepsDigests: true });
    const { publish } = publisher(new Error("the platform refused it"));
    await expect(step("s1", 3, { store, publish })).rejects.toThrow("the platform refused it");
    expect(kept.published).toBeUndefined();
  });

  it("with nothing to compare and no digest to keep, the new snapshot is not read", async () => {
    const { store } = memoryStore({ keepsDigests: false });
    const { published, publish } = publisher();
    // No file at this path: reading it would fail.
    const missing = join(await makeTempDir(), "never-written.jsonl");
    const outcome = await publishGuarded({
      snapshotFile: missing,
      syncId: "s1",
      limit: 30,
      store,
      publish,
    });
    expect(outcome).toEqual({
      held: false,
      verdict: { held: false, basis: "first", limit: 30 },
      published: { file: missing, syncId: "s1" },
    });
    expect(published).toEqual(["s1"]);
  });

  it("a new snapshot that is not complete is refused before anything is published", async () => {
    const { store } = memoryStore({ keepsDigests: true });
    const { published, publish } = publisher();
    const broken = join(await makeTempDir(), "broken.jsonl");
    await writeFile(
      broken,
      `${JSON.stringify({ kind: "sync_start", syncId: "s", connector: "x", startedAt: "t", version: 1 })}\n`,
    );
    await expect(
      publishGuarded({ snapshotFile: broken, syncId: "s", limit: 30, store, publish }),
    ).rejects.toThrow("the new snapshot cannot be read back: it has no sync_end");
    expect(published).toEqual([]);
  });
});

describe("publishHeld", () => {
  async function holding() {
    const { store, kept } = memoryStore({ keepsDigests: true });
    const { published, publish } = publisher();
    await step("s1", 10, { store, publish });
    await step("s2", 5, { store, publish });
    return { store, kept, published, publish };
  }

  it("publishes the held snapshot under its own sync id, once, and records it", async () => {
    const { store, kept, published, publish } = await holding();
    const outcome = await publishHeld({ store, publish });
    expect(outcome).toMatchObject({
      status: "released",
      held: { syncId: "s2" },
      published: { syncId: "s2" },
    });
    expect(published).toEqual(["s1", "s2"]);
    expect(kept.published?.syncId).toBe("s2");
    expect(await publishHeld({ store, publish })).toMatchObject({ status: "nothing_held" });
    expect(published).toEqual(["s1", "s2"]);
  });

  it("a release asked for another sync than the one held, or for one no longer held, is superseded", async () => {
    const { store, published, publish } = await holding();
    expect(await publishHeld({ store, publish, syncId: "s0" })).toEqual({
      status: "superseded",
      detail: "sync s2 is held now, not s0; release again to upload it",
    });
    expect(published).toEqual(["s1"]);
    await publishHeld({ store, publish, syncId: "s2" });
    expect(await publishHeld({ store, publish, syncId: "s2" })).toEqual({
      status: "superseded",
      detail: "sync s2 is no longer held: a later sync replaced it",
    });
    expect(published).toEqual(["s1", "s2"]);
  });
});
