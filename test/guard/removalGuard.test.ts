import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../lib/errors";
import {
  decodeDigest,
  describeVerdict,
  digestSnapshotFile,
  encodeDigest,
  HashList,
  idHash,
  judgeRemoval,
  parseRemovalLimit,
  releaseHashes,
  type SnapshotDigest,
  sharedCount,
} from "../../lib/guard";
import { userKey } from "../../lib/snapshot/records";
import { makeTempDir } from "../helpers/tempDir";

/** A digest of users `u0..u{users-1}` and grants `g0..g{grants-1}` (from `from` on). */
function digest(
  users: number,
  grants: number,
  options: { from?: number; connector?: string } = {},
) {
  const from = options.from ?? 0;
  const u = new HashList();
  const g = new HashList();
  for (let i = from; i < from + users; i++) u.push(idHash(userKey("user", `u${i}`)));
  for (let i = from; i < from + grants; i++) g.push(idHash(`g${i}`));
  return {
    connector: options.connector ?? "blackline",
    syncId: "s",
    users: u.finish(),
    grants: g.finish(),
  } satisfies SnapshotDigest;
}

/** Users 0..99 and grants 0..299, then the new one keeps users `keptUsers` and grants `keptGrants`. */
function shrink(keptUsers: number, keptGrants: number) {
  return judgeRemoval(digest(100, 300), digest(keptUsers, keptGrants), 30);
}

describe("judgeRemoval", () => {
  it("counts the previous snapshot's users and grants the new one no longer has", () => {
    const verdict = judgeRemoval(digest(100, 300), digest(90, 250, { from: 5 }), 30);
    // users 0..99 against 5..94: 0..4 and 95..99 are gone; grants 0..299 against 5..254: 50 gone
    expect(verdict.users).toEqual({ previous: 100, removed: 10 });
    expect(verdict.grants).toEqual({ previous: 300, removed: 50 });
    expect(verdict).toMatchObject({ held: false, basis: "within" });
  });

  it("holds strictly above the limit: 30 of 100 users pass, 31 are held", () => {
    expect(shrink(70, 300)).toMatchObject({ held: false, basis: "within" });
    expect(shrink(69, 300)).toMatchObject({ held: true, basis: "over" });
  });

  it("holds on grants alone", () => {
    expect(shrink(100, 210)).toMatchObject({ held: false });
    expect(shrink(100, 209)).toMatchObject({
      held: true,
      grants: { previous: 300, removed: 91 },
    });
  });

  it("added users and grants do not offset removed ones", () => {
    const verdict = judgeRemoval(digest(100, 300), digest(100, 300, { from: 50 }), 30);
    expect(verdict).toMatchObject({ held: true, users: { removed: 50 }, grants: { removed: 50 } });
  });

  it("a limit of 0 holds any removal, and nothing removed passes", () => {
    expect(judgeRemoval(digest(100, 300), digest(99, 300), 0).held).toBe(true);
    expect(judgeRemoval(digest(100, 300), digest(120, 400), 0).held).toBe(false);
  });

  it("publishes a first sync, and one after another connector's snapshot", () => {
    expect(judgeRemoval(undefined, digest(1, 1), 30)).toEqual({
      held: false,
      basis: "first",
      limit: 30,
    });
    const other = judgeRemoval(digest(100, 300, { connector: "valimail" }), digest(1, 1), 30);
    expect(other).toMatchObject({ held: false, basis: "first" });
  });

  it("publishes after a previous snapshot with no users", () => {
    expect(judgeRemoval(digest(0, 0), digest(5, 5), 30)).toMatchObject({
      held: false,
      basis: "no_users",
    });
  });

  it("switched off, counts but never holds", () => {
    expect(judgeRemoval(digest(100, 300), digest(0, 0), "off")).toMatchObject({
      held: false,
      basis: "off",
      users: { previous: 100, removed: 100 },
    });
  });

  it("says how many of how many and the limit", () => {
    expect(describeVerdict(shrink(60, 300))).toBe(
      "it removes 40 of 100 users (40%) and 0 of 300 grants (0%); the limit is 30%",
    );
    expect(describeVerdict(judgeRemoval(digest(3, 3), digest(2, 3), 30))).toContain(
      "1 of 3 users (33.3%)",
    );
  });
});

describe("digests", () => {
  it("HashList sorts and drops repeated ids; sharedCount merges two lists", () => {
    const list = new HashList();
    for (let i = 0; i < 5_000; i++) list.push(BigInt((i * 7919) % 2_000));
    const values = list.finish();
    expect(values.length).toBe(2_000);
    expect([...values.slice(0, 3)]).toEqual([0n, 1n, 2n]);
    const other = new HashList();
    for (let i = 1_500; i < 2_500; i++) other.push(BigInt(i));
    expect(sharedCount(values, other.finish())).toBe(500);
  });

  it("releaseHashes gives back a HashList's memory at once (its views empty) and leaves other arrays be", () => {
    const list = new HashList();
    for (let i = 0; i < 5_000; i++) list.push(BigInt(i));
    const values = list.finish();
    const view = values.subarray(10, 20);
    releaseHashes(values);
    expect([values.length, view.length, values.buffer.byteLength]).toEqual([0, 0, 0]);
    const plain = new BigUint64Array([1n, 2n]);
    releaseHashes(plain);
    expect([...plain]).toEqual([1n, 2n]);
  });

  it("HashList takes a hash as a bigint or as its two words alike, and finish sorts and drops repeats", () => {
    // Words chosen from few values, so repeats and hashes sharing one word are common.
    const word = fc.constantFrom(0, 1, 2 ** 31, 2 ** 32 - 1, 7);
    fc.assert(
      fc.property(fc.array(fc.tuple(word, word, fc.boolean()), { maxLength: 3_000 }), (hashes) => {
        const list = new HashList();
        const words = new Uint32Array(2);
        for (const [low, high, asWords] of hashes) {
          if (asWords) {
            words[0] = low;
            words[1] = high;
            list.pushWords(words, 0);
          } else list.push((BigInt(high) << 32n) | BigInt(low));
        }
        const expected = [
          ...new Set(hashes.map(([low, high]) => (BigInt(high) << 32n) | BigInt(low))),
        ];
        expected.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
        expect([...list.finish()]).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  });

  it("idHash spreads a tenant's worth of similar ids without a collision", () => {
    const list = new HashList();
    let count = 0;
    for (let user = 100_000; user < 200_000; user++) {
      list.push(idHash(userKey("user", String(user))));
      for (const team of [user % 40, (user * 7) % 40, (user * 13) % 40]) {
        list.push(idHash(`team:${500 + team}:member:user:${user}:${count % 3}`));
        count++;
      }
    }
    expect(list.finish().length).toBe(100_000 + count);
  });

  it("round-trips through bytes, and a file that is not one is named", () => {
    const original = digest(10, 20);
    const decoded = decodeDigest(encodeDigest(original), "x.digest");
    expect(decoded.connector).toBe("blackline");
    expect([...decoded.users]).toEqual([...original.users]);
    expect([...decoded.grants]).toEqual([...original.grants]);
    expect(() => decodeDigest(Buffer.from("hello\nworld"), "x.digest")).toThrow(
      /x.digest is not a snapshot digest/,
    );
    const truncated = encodeDigest(original).subarray(0, -8);
    expect(() => decodeDigest(truncated, "x.digest")).toThrow(/length does not match/);
  });

  it("reads a snapshot file, plain or gzip, counting users by their user trait", async () => {
    const dir = await makeTempDir();
    const lines = [
      { kind: "sync_start", syncId: "s1", connector: "blackline", startedAt: "x", version: 1 },
      { kind: "resource_type", id: "user", displayName: "User", traits: ["user"] },
      {
        kind: "resource",
        type: "user",
        id: "1",
        displayName: "A",
        user: { login: "a", emails: [] },
      },
      {
        kind: "resource",
        type: "user",
        id: "2",
        displayName: "B",
        user: { login: "b", emails: [] },
      },
      { kind: "resource", type: "team", id: "1", displayName: "T" },
      {
        kind: "grant",
        id: "team:1:member:user:1",
        entitlement: "team:1:member",
        principal: { type: "user", id: "1" },
      },
      {
        kind: "sync_end",
        syncId: "s1",
        status: "complete",
        finishedAt: "y",
        counts: { resource_type: 1, resource: 3, entitlement: 0, grant: 1 },
        skipped: { dangling_grant: 0 },
      },
    ];
    const text = lines.map((l) => `${JSON.stringify(l)}\n`).join("");
    const plain = join(dir, "a.jsonl");
    const gzip = join(dir, "b.anything");
    await writeFile(plain, text);
    await writeFile(gzip, gzipSync(text));
    for (const path of [plain, gzip]) {
      const result = await digestSnapshotFile(path);
      if (!("digest" in result)) throw new Error(result.notSnapshot);
      expect(result.digest).toMatchObject({ connector: "blackline", syncId: "s1" });
      expect(result.digest.users.length).toBe(2);
      expect(result.digest.grants.length).toBe(1);
    }
    const incomplete = join(dir, "c.jsonl");
    await writeFile(
      incomplete,
      lines
        .slice(0, -1)
        .map((l) => `${JSON.stringify(l)}\n`)
        .join(""),
    );
    expect(await digestSnapshotFile(incomplete)).toEqual({
      notSnapshot: "it has no sync_end (an incomplete snapshot)",
    });
    const notJson = join(dir, "d.txt");
    await writeFile(notJson, "my notes\n");
    expect(await digestSnapshotFile(notJson)).toEqual({
      notSnapshot: "line 1 is not a snapshot record (not JSON)",
    });
    // Every field the format defines is checked, as export and explore check it.
    const noPrincipal = join(dir, "e.jsonl");
    const withoutPrincipal = lines.map((l) =>
      l.kind === "grant" ? { ...l, principal: undefined } : l,
    );
    await writeFile(noPrincipal, withoutPrincipal.map((l) => `${JSON.stringify(l)}\n`).join(""));
    expect(await digestSnapshotFile(noPrincipal)).toEqual({
      notSnapshot:
        "line 6 is not a snapshot record (a grant's principal: Invalid input: expected object, received undefined)",
    });
  });
});

describe("parseRemovalLimit", () => {
  it("defaults to 30, takes 0 to 100 and off", () => {
    expect(parseRemovalLimit(undefined, "V")).toBe(30);
    expect(parseRemovalLimit(" ", "V")).toBe(30);
    expect(parseRemovalLimit("0", "V")).toBe(0);
    expect(parseRemovalLimit("12.5", "V")).toBe(12.5);
    expect(parseRemovalLimit("100", "V")).toBe(100);
    expect(parseRemovalLimit("OFF", "V")).toBe("off");
  });

  it.each(["101", "-1", "30%", "none", "0x10"])(
    "refuses %s, naming the source and the fix",
    (value) => {
      let error: unknown;
      try {
        parseRemovalLimit(value, "CONNECTOR_MAX_REMOVAL_PERCENT");
      } catch (caught) {
        error = caught;
      }
      expect(ConfigError.is(error)).toBe(true);
      expect((error as Error).message).toMatch(
        /^CONNECTOR_MAX_REMOVAL_PERCENT: ".*" is not a limit; write a percentage from 0 to 100.*or off/,
      );
    },
  );
});
