import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonLine, jsonLinesBytes } from "../../lib/snapshot/jsonLines";

/** What `jsonLinesBytes` must give: each value's `jsonLine`, in order, as UTF-8. */
const oneByOne = (values: readonly object[]) => Buffer.from(values.map(jsonLine).join(""));

describe("jsonLinesBytes", () => {
  it("is each value's jsonLine, whatever the values hold (strings with },{, arrays of objects, any text)", () => {
    // Strings drawn from pieces that matter here: the separator, brackets, quotes, escapes and
    // characters of several UTF-8 bytes, among any Unicode text.
    const text = fc.oneof(
      fc.string({ unit: "binary" }),
      fc
        .array(
          fc.constantFrom(
            "},{",
            "}",
            "{",
            ",",
            '"',
            "\\",
            "\n",
            "\u2028",
            "é",
            "東",
            "😀",
            "\ud800",
            "a",
          ),
        )
        .map((pieces) => pieces.join("")),
    );
    const value = fc.letrec((tie) => ({
      leaf: fc.oneof(text, fc.integer(), fc.boolean(), fc.constant(null)),
      object: fc.dictionary(text, fc.oneof(tie("leaf"), tie("array"), tie("object")), {
        maxKeys: 4,
      }),
      array: fc.array(fc.oneof(tie("leaf"), tie("object")), { maxLength: 3 }),
    }));
    fc.assert(
      fc.property(fc.array(value.object, { maxLength: 8 }), (values) => {
        expect(jsonLinesBytes(values).equals(oneByOne(values))).toBe(true);
      }),
      { seed: 16, numRuns: 2_000 },
    );
  });

  it("is each value's jsonLine across runs of values stringified together (65 to 200 values)", () => {
    // Mostly values whose text holds no `},{` but its separators (the runs are joined), now and
    // then one that does (the values are then serialised one by one).
    const piece = fc.constantFrom("]", "[", "}", '"', "\\", "é", "😀", "a", "\n");
    const id = fc.oneof(
      { weight: 200, arbitrary: fc.array(piece, { maxLength: 3 }).map((p) => p.join("")) },
      { weight: 1, arbitrary: fc.constant("},{") },
    );
    const record = fc.record({
      kind: fc.constant("resource"),
      id,
      tags: fc.array(fc.record({ name: fc.string({ maxLength: 3 }) }), { maxLength: 1 }),
    });
    fc.assert(
      fc.property(fc.array(record, { minLength: 65, maxLength: 200 }), (values) => {
        expect(jsonLinesBytes(values).equals(oneByOne(values))).toBe(true);
      }),
      { seed: 64, numRuns: 300 },
    );
  });

  it("gives no bytes for no values", () => {
    expect(jsonLinesBytes([])).toHaveLength(0);
  });
});
