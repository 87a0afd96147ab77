import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readIdPage } from "../../../lib/connectors/blackline/idPage";
import { idOnly, listResponse } from "../../../lib/connectors/blackline/models";
import "../../property/settings";

/** What `listPage(list, idOnly, ...)` makes of a JSON body: the ids and total, or that it fails. */
function throughSchemas(bytes: Buffer) {
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString("utf8"));
  } catch {
    return "fails";
  }
  const page = listResponse.safeParse(body);
  if (!page.success) return "fails";
  const ids: string[] = [];
  for (const raw of page.data.items) {
    const item = idOnly.safeParse(raw);
    if (!item.success) return "fails";
    ids.push(item.data.id);
  }
  return { ids, totalItems: page.data.totalItems };
}

const space = fc.constantFrom("", " ", "\n", "\t ", "\r\n  ");
const id = fc.oneof(
  fc.stringMatching(/^[0-9A-Za-z_-]{1,12}$/),
  fc.nat(),
  fc.integer(),
  fc.constantFrom(
    "",
    ".",
    "..",
    "a.b",
    "Zoë",
    "\u0001",
    "\ud800",
    "x\\y",
    2 ** 53,
    -0,
    1.5,
    1e21,
    null,
    true,
    [],
    {},
  ),
  fc.string(),
);
/** A key as written: plain, or with an escape that JSON reads as the same key. */
const written = (key: string) =>
  fc.constantFrom(
    JSON.stringify(key),
    `"${key.replace(/[a-z]/, (c) => `\\u00${c.charCodeAt(0).toString(16)}`)}"`,
  );
const member = (key: string, value: fc.Arbitrary<string>) =>
  fc.tuple(written(key), space, space, value).map(([k, s1, s2, v]) => `${k}${s1}:${s2}${v}`);
const jsonText = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v));
const item = fc
  .tuple(
    fc.array(
      member(
        "id",
        id.map((v) => JSON.stringify(v) ?? "null"),
      ),
      { maxLength: 2 },
    ),
    fc.array(
      fc
        .tuple(fc.constantFrom("name", "email", "roles", "x"), jsonText)
        .chain(([k, v]) => member(k, fc.constant(v))),
      { maxLength: 3 },
    ),
    space,
  )
  .chain(([ids, others, s]) =>
    fc
      .shuffledSubarray([...ids, ...others], {
        minLength: ids.length + others.length,
      })
      .map((members) => `{${s}${members.join(`,${s}`)}${s}}`),
  );
const itemOrNot = fc.oneof({ weight: 8, arbitrary: item }, { weight: 1, arbitrary: jsonText });
const total = fc.oneof(
  fc.nat().map(String),
  fc.constantFrom("-1", "1.5", "null", '"3"', "-0", "1e400", "2e0", "9007199254740993"),
);
const page = fc
  .tuple(
    fc.array(itemOrNot, { maxLength: 6 }),
    fc.option(total, { nil: undefined }),
    fc.array(fc.tuple(fc.constantFrom("page", "items", "meta"), jsonText), {
      maxLength: 2,
    }),
    space,
  )
  .map(([items, totalItems, extra, s]) => {
    const members = [`"items":${s}[${s}${items.join(`,${s}`)}${s}]`];
    if (totalItems !== undefined) members.push(`"totalItems":${totalItems}`);
    for (const [k, v] of extra) members.push(`${JSON.stringify(k)}:${v}`);
    return `${s}{${s}${members.join(`,${s}`)}${s}}${s}`;
  });
/** A page's bytes. */
const bytesOf = (text: string) => Buffer.from(text, "utf8");
/**
 * The same page cut short, or with one byte changed (malformed UTF-8 among them): most such bodies
 * are not JSON.
 */
const damaged = fc
  .tuple(
    page.map(bytesOf),
    fc.nat(),
    fc.constantFrom(-1, 0x7d, 0x5d, 0x2c, 0x22, 0x5c, 0, 0x78, 0x31, 0x80, 0xc3, 0xe2, 0xff),
  )
  .map(([bytes, at, b]) => {
    const cut = at % (bytes.length + 1);
    if (b === -1) return bytes.subarray(0, cut);
    const changed = Buffer.from(bytes);
    if (cut < changed.length) changed[cut] = b;
    return changed;
  });

describe("readIdPage reads a membership page's ids without building its items", () => {
  it("answers only what the schemas answer, and answers for a plain page", () => {
    fc.assert(
      fc.property(fc.oneof(page.map(bytesOf), damaged), (bytes) => {
        const fast = readIdPage(bytes);
        if (fast !== undefined) expect(throughSchemas(bytes)).toEqual(fast);
      }),
      { numRuns: 1000 },
    );
  });

  it("answers for every page of plain ids, whatever else the items hold", () => {
    const plainItem = fc
      .tuple(
        fc.oneof(fc.stringMatching(/^[0-9A-Za-z_-]{1,12}$/), fc.nat()),
        fc.array(fc.tuple(fc.constantFrom("name", "email", "roles"), jsonText), { maxLength: 3 }),
        space,
      )
      .map(([value, others, s]) => {
        const members = [
          `"id":${s}${JSON.stringify(value)}`,
          ...others.map(([k, v]) => `"${k}":${v}`),
        ];
        return `{${s}${members.join(`,${s}`)}${s}}`;
      });
    fc.assert(
      fc.property(
        fc.array(plainItem, { maxLength: 6 }),
        fc.option(fc.nat()),
        (items, totalItems) => {
          const total = totalItems === null ? "" : `,"totalItems":${totalItems}`;
          const text = `{"items":[${items.join(",")}]${total}}`;
          const fast = readIdPage(bytesOf(text));
          expect(fast).toBeDefined();
          expect(throughSchemas(bytesOf(text))).toEqual(fast);
        },
      ),
    );
  });

  it("reads a page of full user records as the schemas do", () => {
    const text = JSON.stringify({
      totalItems: 3,
      items: [
        {
          id: 17,
          loginId: "a",
          firstName: "Zoë",
          roles: [{ id: 2 }],
          nested: { id: "no" },
        },
        {
          firstName: "名前",
          id: "u-18_x",
          email: null,
          active: true,
          score: -1.5e3,
        },
        { id: "a.b" },
      ],
    });
    expect(readIdPage(bytesOf(text))).toEqual({
      ids: ["17", "u-18_x", "a.b"],
      totalItems: 3,
    });
    expect(throughSchemas(bytesOf(text))).toEqual(readIdPage(bytesOf(text)));
  });

  it("leaves to the schemas whatever they must refuse or read themselves", () => {
    const cases = [
      "",
      "not json",
      '\ufeff{"items":[]}',
      '{"items":[]} x',
      '{"items":[{"id":"7","id":"8"}]}',
      '{"items":[{"i\\u0064":"7"}]}',
      '{"items":[{"id":"7\\u0000"}]}',
      '{"items":[{"id":".."}]}',
      '{"items":[{"name":"no id"}]}',
      '{"items":[[]]}',
      '{"items":[{"id":9007199254740993}]}',
      '{"items":[],"totalItems":null}',
      '{"items":[],"totalItems":-1}',
      '{"items":[],"items":[]}',
      '{"totalItems":0}',
      `{"items":[{"id":"7","x":${"[".repeat(70)}1${"]".repeat(70)}}]}`,
    ];
    for (const text of cases) expect(readIdPage(bytesOf(text))).toBeUndefined();
  });
});
