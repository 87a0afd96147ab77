// A run's line gives back the record it was made from, whatever its ids hold: a grant is its key
// as escaped text, the others JSON.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeRecord, encodeRecord, keyedRecord } from "../../lib/diff/keyedRecord";

/** Ids of any characters but NUL, with the ones a line format must escape often. */
const id = fc
  .oneof(
    fc.string({ unit: "grapheme" }),
    fc
      .array(fc.constantFrom("\\", "\n", "\r", '"', "\t", "a", ":", "é", "\u{1F600}"))
      .map((parts) => parts.join("")),
  )
  .filter((s) => !s.includes("\u0000"));

const principal = { type: "user", id: "1" };

describe("run lines", () => {
  it("round-trip grants, entitlements and resources with any id (backslashes, line breaks)", () => {
    fc.assert(
      fc.property(id, id, id, (entitlement, grantId, name) => {
        const records = [
          keyedRecord({ kind: "grant", id: grantId, entitlement, principal }),
          keyedRecord({
            kind: "entitlement",
            id: entitlement,
            resource: { type: "team", id: name },
            slug: "member",
            displayName: name,
            purpose: "assignment",
            grantableTo: ["user"],
          }),
          keyedRecord({
            kind: "resource",
            type: "user",
            id: grantId,
            displayName: name,
            status: "disabled",
            user: { login: name, emails: [name, grantId] },
          }),
          keyedRecord({ kind: "resource", type: "team", id: entitlement, displayName: name }),
        ];
        for (const record of records) {
          const line = encodeRecord(record as NonNullable<typeof record>);
          expect(line).not.toContain("\n");
          expect(decodeRecord(line)).toEqual(JSON.parse(JSON.stringify(record)));
        }
      }),
    );
    const grant = keyedRecord({ kind: "grant", id: "a\\n\nb\\", entitlement: "e\\", principal });
    expect(decodeRecord(encodeRecord(grant as NonNullable<typeof grant>))).toEqual(grant);
  });
});
