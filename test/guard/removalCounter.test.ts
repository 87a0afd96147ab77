/**
 * The command line's guard counts what a new snapshot removes while it reads the previous one
 * (`RemovalCounter`), without building that one's digest: its counts must be `judgeRemoval`'s
 * from the two digests, for any two snapshots, records repeated and other kinds included.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { judgeRemoval, SnapshotDigestBuilder } from "../../lib/guard";
import { RemovalCounter } from "../../lib/guard/RemovalCounter";
import type { DigestedRecord } from "../../lib/guard/SnapshotDigestBuilder";

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
