import { readdir } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { DuplicateCheck } from "../../lib/snapshot/DuplicateCheck";
import type { BodyLine } from "../../lib/snapshot/records";
import { MAX_FAN_IN } from "../../lib/sortedRuns/runs";
import { makeTempDir } from "../helpers/tempDir";

// The snapshot reader's duplicate check on disk, with runs of 3 records so that a file of a few
// hundred records takes many runs: more than one merge reads at once (a pass of merging first),
// a record twice inside one run and across two, and no temporary file left behind.

const grant = (n: number): BodyLine => ({
  kind: "grant",
  id: `team:${n % 7}:member:user:${n}`,
  entitlement: `team:${n % 7}:member`,
  principal: { type: "user", id: String(n) },
});
const user = (id: string): BodyLine => ({
  kind: "resource",
  type: "user",
  id,
  displayName: `User ${id}`,
});

const RUN = 3;
/** Enough records for more runs than one merge reads at once. */
const MANY = RUN * (MAX_FAN_IN * 2 + 5);

async function check(lines: BodyLine[]) {
  const dir = await makeTempDir("ac-keys-");
  const keys = new DuplicateCheck("snap.jsonl", { dir, runRecords: RUN });
  try {
    for (const line of lines) await keys.add(line);
    return { repeated: await keys.repeated(), dir };
  } finally {
    await keys.close();
  }
}

describe("DuplicateCheck", () => {
  it("finds nothing in records that are all distinct, over more runs than a merge reads at once", async () => {
    const lines = Array.from({ length: MANY }, (_, n) => grant(n));
    // A user and a team with one id, and a grant whose id is a resource's key: other identities.
    lines.push(user("7"), { ...user("7"), type: "team" }, { ...grant(1), id: "user:7" });
    const { repeated, dir } = await check(lines);
    expect(repeated).toBeUndefined();
    expect(await readdir(dir)).toEqual([]);
  });

  it("finds a grant twice in two runs far apart, a pass of merging between", async () => {
    const lines = Array.from({ length: MANY }, (_, n) => grant(n));
    lines.push(grant(4));
    const { repeated, dir } = await check(lines);
    expect(repeated).toEqual({ kind: "grant", key: grant(4).id });
    expect(await readdir(dir)).toEqual([]);
  });

  it("finds a resource twice in one run, named {type}:{id}", async () => {
    const { repeated } = await check([grant(1), user("a:b"), user("a:b")]);
    expect(repeated).toEqual({ kind: "resource", key: "user:a:b" });
  });

  it("keeps keys with a backslash or a line break apart", async () => {
    const { repeated } = await check([user("a\nb"), user("a\\nb"), user("a\\\nb"), grant(3)]);
    expect(repeated).toBeUndefined();
    expect((await check([user("x"), user("a\nb"), user("y"), user("a\nb")])).repeated).toEqual({
      kind: "resource",
      key: "user:a\nb",
    });
  });
});
