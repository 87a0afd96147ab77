/**
 * The command line's guard counts what a new snapshot removes while it reads the previous one
 * (`RemovalCounter`), without building that one's digest: its counts must be `judgeRemoval`'s
 * from the two digests, for any two snapshots, records repeated and other kinds included.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeDigest, encodeDigest, judgeRemoval, SnapshotDigestBuilder } from "../../lib/guard";
import { countRemovalsFromDigestFile } from "../../lib/guard/digestFileRemovals";
import { RemovalCounter } from "../../lib/guard/RemovalCounter";
import type { DigestedRecord } from "../../lib/guard/SnapshotDigestBuilder";
import { makeTempDir } from "../helpers/tempDir";

const record = fc.oneof(
  fc.record({
    kind: fc.constant("resource" as const),
    type: fc.constantFrom("user", "team"),
    id: fc.integer({ min: 0, max: 60 }).map(String),
    user: fc.constant({}),
  }),
  fc.record({
    kind: fc.constant("grant" as const),
    id: fc.integer({ min: 0, max: 200 }).map(String),
  }),
  fc.constant({ kind: "entitlement" as const }),
);

function digestOf(records: readonly DigestedRecord[]) {
  const builder = new SnapshotDigestBuilder();
  for (const r of records) builder.add(r);
  return builder.finish({ syncId: "s", connector: "blackline" });
}

describe("RemovalCounter", () => {
  it("counts the previous snapshot's users and grants, and those the new one lacks, as judgeRemoval does", () => {
    fc.assert(
      fc.property(
        fc.array(record, { maxLength: 300 }),
        fc.array(record, { maxLength: 300 }),
        (previous, next) => {
          const nextDigest = digestOf(next);
          const counter = new RemovalCounter(nextDigest);
          for (const r of previous) counter.add(r);
          const verdict = judgeRemoval(digestOf(previous), nextDigest, "off");
          const counted = counter.finish();
          if (verdict.basis === "no_users") expect(counted.users.previous).toBe(0);
          else expect(counted).toEqual({ users: verdict.users, grants: verdict.grants });
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("countRemovalsFromDigestFile (the service's guard)", () => {
  const users = (from: number, count: number): DigestedRecord[] =>
    Array.from({ length: count }, (_, i) => ({
      kind: "resource",
      type: "user",
      id: `u${from + i}`,
      user: {},
    }));
  const grants = (from: number, count: number): DigestedRecord[] =>
    Array.from({ length: count }, (_, i) => ({ kind: "grant", id: `g${from + i}` }));

  it("counts from the file, read in blocks that cut hashes, what judgeRemoval counts from the digests", async () => {
    // 40,000 users and 50,000 grants: 720,000 bytes of hashes, three blocks of 256 KiB.
    const previous = digestOf([...users(0, 40_000), ...grants(0, 50_000)]);
    const next = digestOf([...users(10_000, 40_000), ...grants(0, 30_000)]);
    const path = join(await makeTempDir(), "published.digest");
    await writeFile(path, encodeDigest(previous));

    const counted = await countRemovalsFromDigestFile(path, next);
    const verdict = judgeRemoval(previous, next, "off");
    expect(counted).toEqual({
      connector: "blackline",
      users: verdict.users,
      grants: verdict.grants,
    });
    expect(counted?.users).toEqual({ previous: 40_000, removed: 10_000 });
  });

  it("is undefined without a file, and refuses a broken one as decodeDigest does", async () => {
    const dir = await makeTempDir();
    const next = digestOf(users(0, 3));
    expect(await countRemovalsFromDigestFile(join(dir, "none.digest"), next)).toBeUndefined();
    const broken = [Buffer.from("hello\nworld"), encodeDigest(next).subarray(0, -8)];
    for (const [i, bytes] of broken.entries()) {
      const path = join(dir, `broken-${i}.digest`);
      await writeFile(path, bytes);
      const decoded = (() => {
        try {
          decodeDigest(bytes, path);
        } catch (error) {
          return (error as Error).message;
        }
      })();
      await expect(countRemovalsFromDigestFile(path, next)).rejects.toThrow(decoded);
    }
  });
});
