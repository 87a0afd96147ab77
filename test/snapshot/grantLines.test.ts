import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { grantLinesBytes } from "../../lib/snapshot/grantLines";
import { jsonLine } from "../../lib/snapshot/jsonLines";
import { type GrantRecord, grant } from "../../lib/snapshot/records";

/** What `grantLinesBytes` must give: each grant's `jsonLine`, in order, as UTF-8. */
const oneByOne = (grants: readonly object[]) => Buffer.from(grants.map(jsonLine).join(""));

/** An object whose prototype has a non-enumerable `toJSON`, as a class method would be. */
const withToJson = (toJSON: () => object) =>
  Object.create(Object.defineProperty({}, "toJSON", { value: toJSON, enumerable: false }));

/** Ids from pieces that decide between the template and JSON.stringify, among any text. */
const text = fc.oneof(
  fc.string({ unit: "binary", maxLength: 12 }),
  fc
    .array(
      fc.constantFrom(
        "a",
        "7",
        ":",
        '"',
        "\\",
        "\n",
        "\u001f",
        " ",
        "\u007f",
        "\u0080",
        "é",
        "😀",
        "\ud800",
        "/",
      ),
      { maxLength: 6 },
    )
    .map((pieces) => pieces.join("")),
);

/** Grants as `grant()` builds them, and grants shaped otherwise that must not take the template. */
const anyGrant: fc.Arbitrary<object> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.tuple(text, text, text).map(([e, t, i]) => grant(e, { type: t, id: i })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(text, text, text).map(([e, t, i]) => ({
      id: `${e}:${t}:${i}`,
      kind: "grant",
      entitlement: e,
      principal: { type: t, id: i },
    })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(text, text).map(([e, i]) => ({
      ...grant(e, { type: "user", id: i }),
      principal: { id: i, type: "user" },
    })),
  },
  { weight: 1, arbitrary: text.map((e) => ({ ...grant(e, { type: "user", id: "1" }), extra: e })) },
  {
    weight: 1,
    arbitrary: text.map((e) => ({ ...grant(e, { type: "user", id: 1 as unknown as string }) })),
  },
  {
    weight: 1,
    arbitrary: text.map((e) =>
      Object.assign(
        withToJson(() => ({ replaced: e })),
        grant(e, { type: "user", id: "1" }),
      ),
    ),
  },
);

/** Grants as `grant()` builds them from plain ASCII ids: the template's case. */
const plainId = fc.stringMatching(/^[a-z0-9:_-]{1,12}$/);
const plainGrant: fc.Arbitrary<object> = fc
  .tuple(plainId, plainId, plainId)
  .map(([e, t, i]) => grant(e, { type: t, id: i }));

describe("grantLinesBytes", () => {
  it("is each grant's jsonLine, whatever the grant holds or how it is shaped", () => {
    fc.assert(
      fc.property(fc.array(anyGrant, { maxLength: 8 }), fc.nat(16), (grants, reserve) => {
        const bytes = grantLinesBytes(grants as GrantRecord[], reserve);
        expect(bytes.length).toBe(reserve + oneByOne(grants).length);
        expect(bytes.subarray(reserve).equals(oneByOne(grants))).toBe(true);
      }),
      { seed: 25, numRuns: 3_000 },
    );
  });

  it("is each grant's jsonLine across runs of lines (pages of hundreds, plain and odd grants mixed)", () => {
    fc.assert(
      fc.property(
        // Plain ASCII grants with up to three others among them: some runs of 256 lines are
        // all plain, others not.
        fc
          .tuple(
            fc.array(plainGrant, { minLength: 250, maxLength: 800 }),
            fc.array(fc.tuple(fc.nat(), anyGrant), { maxLength: 3 }),
          )
          .map(([plain, others]) => {
            const grants = [...plain];
            for (const [at, other] of others) grants.splice(at % grants.length, 0, other);
            return grants;
          }),
        fc.nat(16),
        (grants, reserve) => {
          const bytes = grantLinesBytes(grants as GrantRecord[], reserve);
          expect(bytes.subarray(reserve).equals(oneByOne(grants))).toBe(true);
        },
      ),
      { seed: 26, numRuns: 60 },
    );
  });

  it("writes a grant of another prototype by its toJSON, as JSON.stringify does", () => {
    const odd = Object.assign(
      withToJson(() => ({ kind: "x" })),
      grant("team:1:member", { type: "user", id: "2" }),
    );
    expect(grantLinesBytes([odd]).toString()).toBe('{"kind":"x"}\n');
  });

  it("gives only the reserved bytes for no grants", () => {
    expect(grantLinesBytes([], 8)).toHaveLength(8);
  });
});
