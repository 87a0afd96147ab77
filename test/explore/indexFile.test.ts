import { createHash } from "node:crypto";
import { readFile, stat, truncate, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { indexPathOf, openExplore } from "../../lib/explore";
import { listAccounts } from "../../lib/explore/accountViews";
import { accountsQuery } from "../../lib/explore/apiSchemas";
import { makeTempDir } from "../helpers/tempDir";
import { writeFixtureSnapshot } from "./fixtureSnapshot";

// The review page's index file beside the snapshot: built once, read back while the snapshot is
// unchanged, rebuilt when the snapshot changed or the file is cut short or damaged; only its
// owner may read it.

/** What a page shows of the snapshot: enough to see that an index answers as a fresh one does. */
async function shown(snapshot: string) {
  const { explore } = await openExplore(snapshot);
  const page = listAccounts(explore, accountsQuery.parse({ q: "ada", sort: "login", dir: "desc" }));
  const result = {
    accounts: explore.index.accounts.length,
    grants: explore.index.grantCount,
    total: page.total,
    rows: page.rows.map((r) => [r.id, r.name, r.entitlements]),
  };
  explore.index.close();
  return result;
}

/** The index file's inode and modification time: unchanged when it was only read. */
async function identity(snapshot: string) {
  const s = await stat(indexPathOf(snapshot));
  return { ino: s.ino, mtimeMs: s.mtimeMs, mode: s.mode & 0o777 };
}

describe("explore: the index file beside the snapshot", () => {
  it("is built on the first start (owner-only), read back on the next, rebuilt when the snapshot changes", async () => {
    const dir = await makeTempDir("ac-explore-index-");
    const snapshot = join(dir, "s.jsonl");
    await writeFixtureSnapshot(snapshot, { users: 300, variant: "new" });
    const fresh = await shown(snapshot);
    expect(fresh.accounts).toBe(300);
    expect(fresh.total).toBeGreaterThan(0);
    const built = await identity(snapshot);
    expect(built.mode).toBe(0o600);

    expect(await shown(snapshot)).toEqual(fresh);
    expect(await identity(snapshot)).toEqual(built);

    // Another sync written to the same path: a new index of the new snapshot.
    await writeFixtureSnapshot(snapshot, { users: 120, variant: "new" });
    const changed = await shown(snapshot);
    expect(changed.accounts).toBe(120);
    expect((await identity(snapshot)).ino).not.toBe(built.ino);

    // Only the modification time moved (the same bytes): rebuilt too, to the same answers.
    const before = await identity(snapshot);
    const later = new Date(Date.now() + 5_000);
    await utimes(snapshot, later, later);
    expect(await shown(snapshot)).toEqual(changed);
    expect((await identity(snapshot)).ino).not.toBe(before.ino);
  });

  it("rebuilds an index cut short, damaged in any byte, or not an index at all", async () => {
    const dir = await makeTempDir("ac-explore-index-");
    const snapshot = join(dir, "s.jsonl");
    await writeFixtureSnapshot(snapshot, { users: 200, variant: "new" });
    const fresh = await shown(snapshot);
    const path = indexPathOf(snapshot);
    const whole = await readFile(path);

    const damages: [string, () => Promise<void>][] = [
      ["cut short", () => truncate(path, Math.floor(whole.length / 2))],
      ["empty", () => truncate(path, 0)],
      [
        "one byte of a record changed",
        async () => {
          const copy = Buffer.from(whole);
          copy[100] = (copy[100] as number) ^ 0x20;
          await writeFile(path, copy);
        },
      ],
      [
        "one byte of an array changed",
        async () => {
          const copy = Buffer.from(whole);
          const at = whole.length - 2_000;
          copy[at] = (copy[at] as number) ^ 0x01;
          await writeFile(path, copy);
        },
      ],
      ["not an index", () => writeFile(path, "hello\n")],
      [
        "whole by its hash, but its about of another shape",
        async () => {
          const FOOTER = 56;
          const footer = whole.subarray(whole.length - FOOTER);
          const at = footer.readDoubleLE(8);
          const trailer = JSON.parse(whole.subarray(at, whole.length - FOOTER).toString());
          trailer.about.typeIds = trailer.about.typeIds.map(() => 0);
          const bytes = Buffer.from(JSON.stringify(trailer));
          const out = Buffer.concat([whole.subarray(0, at), bytes, Buffer.alloc(FOOTER)]);
          footer.copy(out, out.length - FOOTER, 0, 8);
          out.writeDoubleLE(at, out.length - FOOTER + 8);
          out.writeDoubleLE(bytes.length, out.length - FOOTER + 16);
          createHash("sha256")
            .update(out.subarray(0, out.length - FOOTER))
            .digest()
            .copy(out, out.length - FOOTER + 24);
          await writeFile(path, out);
        },
      ],
    ];
    for (const [what, damage] of damages) {
      await damage();
      expect({ what, ...(await shown(snapshot)) }).toEqual({ what, ...fresh });
      expect(await readFile(path), what).toEqual(whole);
    }
  });
});

describe("explore --diff: OLD's index beside OLD", () => {
  it("is built on the first start and read back on the next, the same changes found", async () => {
    const dir = await makeTempDir("ac-explore-index-");
    const snapshot = join(dir, "new.jsonl");
    const old = join(dir, "old.jsonl");
    await writeFixtureSnapshot(snapshot, { users: 200, variant: "new" });
    await writeFixtureSnapshot(old, { users: 200, variant: "old" });
    const start = async () => {
      const { explore } = await openExplore(snapshot, old);
      const changes = explore.changes;
      if (!changes) throw new Error("no changes with --diff");
      const seen = { reused: [explore.index.reused, changes.old.reused], ...changes.counts };
      explore.index.close();
      changes.old.close();
      return seen;
    };
    const first = await start();
    expect(first.reused).toEqual([false, false]);
    expect(first.accountsAdded + first.accountsRemoved + first.grantsAdded).toBeGreaterThan(0);
    const built = await identity(old);
    expect(built.mode).toBe(0o600);
    expect(await start()).toEqual({ ...first, reused: [true, true] });
    expect(await identity(old)).toEqual(built);
  });
});
