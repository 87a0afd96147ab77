/**
 * The removal guard's digest as the snapshot's writer builds it (`SnapshotAssembler.digest`) is
 * the digest the guard reads back from the file written (`digestSnapshotFile`): same users, same
 * grants, none of the records left out (dangling grants, records delivered twice), plain and gzip.
 * And `publishGuarded` given that digest judges with it, without reading the new file.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { digestSnapshotFile, idHash, type SnapshotDigest } from "../../lib/guard";
import { publishGuarded } from "../../lib/publish";
import { grant, SnapshotAssembler, SnapshotFile, type SnapshotRecord } from "../../lib/snapshot";
import { userKey } from "../../lib/snapshot/records";
import { readSnapshot } from "../helpers/snapshot";
import { makeTempDir } from "../helpers/tempDir";

/** Ids that JSON escapes, that UTF-8 spells in several bytes, and a lone surrogate. */
const NAMES = ["Zoë", "東京", "😀", 'q"b\\s', "nl\nx", "ctl\u0001", "lone\ud800", "plain"];

const user = (id: string): SnapshotRecord => ({
  kind: "resource",
  type: "user",
  id,
  displayName: id,
  user: { login: `${id}@example.com`, emails: [] },
});
const team = (id: string): SnapshotRecord[] => [
  { kind: "resource", type: "team", id, displayName: id },
  {
    kind: "entitlement",
    id: `team:${id}:member`,
    resource: { type: "team", id },
    slug: "member",
    displayName: `${id} member`,
    purpose: "assignment",
    grantableTo: ["user"],
  },
];

/**
 * Pages of users, teams (resources that are not users) and grants: grants before what they
 * name, pages whose grants are all kept, pages with dangling grants among kept ones (a missing
 * team, a missing user), a page delivered twice, and a user id equal to a team id.
 */
function pages(): SnapshotRecord[][] {
  const out: SnapshotRecord[][] = [];
  for (let p = 0; p < 12; p++) {
    const page: SnapshotRecord[] = [];
    for (let n = 0; n < 50; n++) {
      const k = p * 50 + n;
      const id = `${NAMES[k % NAMES.length]}-${k}`;
      page.push(grant(`team:t${k % 7}:member`, { type: "user", id }));
      if (p % 2 === 1 && k % 5 === 0) {
        page.push(grant(`team:missing${k}:member`, { type: "user", id }));
        page.push(grant(`team:t${k % 7}:member`, { type: "user", id: `gone-${k}` }));
      }
      page.push(user(id));
    }
    out.push(page);
    if (p % 5 === 0) out.push(page);
  }
  out.push([...team("t0"), user("t1")]);
  out.push(Array.from({ length: 6 }, (_, i) => team(`t${i + 1}`)).flat());
  return out;
}

async function assemble(path: string) {
  const file = await SnapshotFile.open(path, "s", "choose another path");
  const assembler = await SnapshotAssembler.open({
    out: file.stream,
    spoolDir: join(path, ".."),
    syncId: "s",
    connector: "test",
  });
  for (const page of pages()) await assembler.write(page);
  const result = await assembler.complete();
  await file.commit();
  return { result, digest: assembler.digest };
}

const list = (hashes: BigUint64Array) => Array.from(hashes);

describe("the digest SnapshotAssembler builds as it writes", () => {
  it.each(["s.jsonl", "s.jsonl.gz"])(
    "is the digest read back from the file written (%s)",
    async (name) => {
      const path = join(await makeTempDir(), name);
      const { result, digest } = await assemble(path);
      const read = await digestSnapshotFile(path);
      if (!("digest" in read)) throw new Error(read.notSnapshot);

      expect(result.skipped.dangling_grant).toBe(120);
      expect(digest.syncId).toBe(read.digest.syncId);
      expect(digest.connector).toBe(read.digest.connector);
      expect(list(digest.users)).toEqual(list(read.digest.users));
      expect(list(digest.grants)).toEqual(list(read.digest.grants));
      expect(digest).toEqual(read.digest);

      // What it holds: the users written (not the teams) and the grants written (not the dangling ones).
      const lines = await readSnapshot(path);
      const users = lines.filter((l) => l.kind === "resource" && l.type === "user");
      const grants = lines.filter((l) => l.kind === "grant");
      expect(digest.users).toHaveLength(601);
      expect(users).toHaveLength(601);
      expect(digest.grants).toHaveLength(result.counts.grant);
      expect(grants).toHaveLength(600);
      const dangling = grant("team:missing5:member", { type: "user", id: `${NAMES[5]}-5` }).id;
      expect(digest.grants.includes(idHash(dangling))).toBe(false);
      expect(digest.users.includes(idHash(userKey("team", "t1")))).toBe(false);
      expect(digest.users.includes(idHash(userKey("user", "t1")))).toBe(true);
    },
  );

  it("is what publishGuarded judges with: the new snapshot is not read again", async () => {
    const dir = await makeTempDir();
    const { digest } = await assemble(join(dir, "s.jsonl"));
    const previous: SnapshotDigest = {
      ...digest,
      syncId: "before",
      users: new BigUint64Array([...digest.users, idHash(userKey("user", "left"))]).sort(),
    };
    const recorded: SnapshotDigest[] = [];
    const outcome = await publishGuarded({
      snapshotFile: join(dir, "not-there.jsonl"),
      digest,
      syncId: "s",
      limit: 50,
      store: {
        published: async () => previous,
        recordPublished: async (d) => {
          recorded.push(d);
        },
        hold: async () => {},
        held: async () => undefined,
        withHeldSnapshot: () => Promise.reject(new Error("nothing held")),
      },
      publish: async () => "published",
    });
    expect(outcome.held).toBe(false);
    expect(outcome.verdict).toMatchObject({
      basis: "within",
      users: { previous: 602, removed: 1 },
    });
    expect(recorded).toEqual([digest]);
  });

  it("is not handed out before the snapshot is complete", async () => {
    const dir = await makeTempDir();
    const file = await SnapshotFile.open(join(dir, "s.jsonl"), "s", "choose another path");
    const assembler = await SnapshotAssembler.open({
      out: file.stream,
      spoolDir: dir,
      syncId: "s",
      connector: "test",
    });
    expect(() => assembler.digest).toThrow("the snapshot is not complete");
    await assembler.abort();
    await file.abort();
  });
});
