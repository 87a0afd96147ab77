import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LARGE_BYTES, parseLargeJson, readJsonObject } from "../../lib/json/largeJson";
import "../property/settings";

/** `JSON.parse` of the bytes as an answer's text is decoded, or "fails". */
function whole(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString("utf8"));
  } catch {
    return "fails";
  }
}

/** Same value, same key order, same own keys (`__proto__` too). */
function same(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(a, b) && JSON.stringify(a) === JSON.stringify(b);
}

/** Records what it is handed, in order. */
class Recorder {
  readonly seen: unknown[] = [];
  constructor(readonly key: string) {}
  visit(element: unknown, index: number): void {
    expect(index).toBe(this.seen.length);
    this.seen.push(element);
  }
}

const space = fc.constantFrom("", " ", "\n", "\t ", "\r\n  ");
/** Strings that trouble a scanner: quotes, backslashes, brackets and commas inside, any Unicode. */
const tricky = fc.oneof(
  fc.string({ unit: "grapheme" }),
  fc.constantFrom('"', "\\", '\\"', "},{", "]", "[", "{", "}", ":", ",", "Śliwa", "😀", "\u0000"),
);
const element = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.record({ id: fc.nat(), name: tricky, roles: fc.array(fc.record({ id: tricky })) }),
);
/** JSON text with whitespace between tokens, as a server may write it. */
function spaced(value: unknown, s: string): string {
  if (Array.isArray(value)) return `[${s}${value.map((v) => spaced(v, s)).join(`${s},${s}`)}${s}]`;
  if (value !== null && typeof value === "object") {
    const members = Object.entries(value).map(
      ([k, v]) => `${JSON.stringify(k)}${s}:${s}${spaced(v, s)}`,
    );
    return `{${s}${members.join(`${s},${s}`)}${s}}`;
  }
  return JSON.stringify(value);
}
/** A page-like object: an array member long enough for several runs, beside other members. */
const page = fc
  .record({
    items: fc.array(element, { maxLength: 400 }),
    totalItems: fc.option(fc.nat(), { nil: undefined }),
    other: fc.jsonValue({ maxDepth: 2 }),
  })
  // As JSON: an absent total left out, objects of Object's prototype.
  .chain((value) => fc.tuple(fc.constant(JSON.parse(JSON.stringify(value)) as unknown), space));

describe("readJsonObject: an object in pieces, as JSON.parse reads it whole", () => {
  it("gives exactly JSON.parse's value for any object, its arrays cut into runs", () => {
    fc.assert(
      fc.property(page, ([value, s]) => {
        const bytes = Buffer.from(`${s}${spaced(value, s)}${s}`);
        expect(same(readJsonObject(bytes), whole(bytes))).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it("hands the visited array's elements over in order and leaves it empty", () => {
    fc.assert(
      fc.property(page, ([value, s]) => {
        const bytes = Buffer.from(spaced(value, s));
        const recorder = new Recorder("items");
        const read = readJsonObject(bytes, recorder);
        const parsed = whole(bytes) as Record<string, unknown>;
        expect(same(recorder.seen, parsed.items)).toBe(true);
        expect(same(read, { ...parsed, items: [] })).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it("reads no text that JSON.parse refuses (cut short, a byte changed, a byte added)", () => {
    fc.assert(
      fc.property(
        page,
        fc.nat(),
        fc.constantFrom("cut", "change", "insert"),
        fc.integer({ min: 0, max: 255 }),
        ([value, s], at, how, byte) => {
          const text = Buffer.from(spaced(value, s));
          const i = at % text.length;
          const bytes =
            how === "cut"
              ? text.subarray(0, i)
              : how === "change"
                ? Buffer.concat([text.subarray(0, i), Buffer.from([byte]), text.subarray(i + 1)])
                : Buffer.concat([text.subarray(0, i), Buffer.from([byte]), text.subarray(i)]);
          const expected = whole(bytes);
          const read = readJsonObject(bytes);
          if (expected === "fails" || Array.isArray(expected) || typeof expected !== "object") {
            expect(read).toBeUndefined();
          } else {
            expect(same(read, expected)).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("decodes malformed UTF-8 inside strings as toString does (U+FFFD), across runs", () => {
    const broken = Buffer.from([0xc3, 0x28, 0xe2, 0x82, 0xf0, 0x9f, 0x98]);
    const items = Array.from({ length: 3000 }, (_, i) =>
      Buffer.concat([Buffer.from(`{"id":${i},"name":"a`), broken, Buffer.from('b"}')]),
    );
    const bytes = Buffer.concat([
      Buffer.from('{"items":['),
      Buffer.concat(items.flatMap((item, i) => (i ? [Buffer.from(","), item] : [item]))),
      Buffer.from("]}"),
    ]);
    expect(bytes.length).toBeGreaterThan(LARGE_BYTES);
    expect(same(readJsonObject(bytes), whole(bytes))).toBe(true);
  });

  it("defines __proto__ as an own member, and a key written twice keeps its place and last value", () => {
    const bytes = Buffer.from('{"a":1,"__proto__":{"x":1},"b":[1],"a":[2,3]}');
    const read = readJsonObject(bytes) as Record<string, unknown>;
    expect(Object.getPrototypeOf(read)).toBe(Object.prototype);
    expect(Object.keys(read)).toEqual(["a", "__proto__", "b"]);
    expect(same(read, whole(bytes))).toBe(true);
  });

  it("visits nothing when the visited key stands twice: JSON.parse keeps only the last", () => {
    const bytes = Buffer.from('{"items":[{"id":1}],"totalItems":1,"items":[{"id":2}]}');
    const recorder = new Recorder("items");
    expect(readJsonObject(bytes, recorder)).toBeUndefined();
    expect(recorder.seen).toEqual([]);
  });

  it("reads only an object at the top", () => {
    for (const text of ["[1,2]", '"x"', "3", "null", "", " ", "\ufeff{}"]) {
      expect(readJsonObject(Buffer.from(text))).toBeUndefined();
    }
    expect(readJsonObject(Buffer.from(" {} "))).toEqual({});
  });
});

describe("parseLargeJson", () => {
  it("leaves a small answer to JSON.parse whole, and reads a large one in pieces", () => {
    const small = Buffer.from(JSON.stringify({ items: [1, 2, 3] }));
    expect(parseLargeJson(small)).toBeUndefined();
    const large = Buffer.from(
      JSON.stringify({ items: Array.from({ length: 5000 }, (_, id) => ({ id, name: "Zoë" })) }),
    );
    expect(large.length).toBeGreaterThan(LARGE_BYTES);
    expect(same(parseLargeJson(large), JSON.parse(large.toString()))).toBe(true);
  });
});
