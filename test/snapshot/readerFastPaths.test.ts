import { createInterface } from "node:readline";
import { Readable } from "node:stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalLine, grantLine } from "../../lib/snapshot/canonicalLine";
import { lineBatches } from "../../lib/snapshot/lineBatches";
import { readCompleteSnapshot } from "../../lib/snapshot/readSnapshot";
import { grant, snapshotLine } from "../../lib/snapshot/records";

/**
 * The snapshot reader's fast paths (lib/snapshot/readSnapshot.ts) must read exactly what the
 * slow ones read: the same lines as node:readline, and for each line the record zod gives back, or
 * no fast answer at all (then zod decides, so a bad line is refused in the same words).
 */

const readlineLines = async (chunks: Buffer[]) => {
  const lines: string[] = [];
  const input = Readable.from(chunks);
  for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY }))
    if (line.length > 0) lines.push(line);
  return lines;
};

const batchedLines = async (chunks: Buffer[]) => {
  const lines: string[] = [];
  for await (const batch of lineBatches(Readable.from(chunks))) lines.push(...batch);
  return lines;
};

describe("lineBatches", () => {
  it("gives node:readline's lines, wherever the chunks are cut (CR, CRLF, characters of several bytes, bad bytes)", async () => {
    const piece = fc.constantFrom(
      ...["\n", "\r", "\r\n", "\n\n", "a", "{}", "é", "😀", "\u2028"].map((s) => Buffer.from(s)),
      Buffer.from([0xff]),
      Buffer.from([0xe6, 0x9d]),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(piece, { maxLength: 40 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (pieces, cuts) => {
          const bytes = Buffer.concat(pieces);
          const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const chunks = [0, ...at]
            .map((from, i) => bytes.subarray(from, at[i] ?? bytes.length))
            .filter((c) => c.length > 0);
          expect(await batchedLines(chunks)).toEqual(await readlineLines(chunks));
        },
      ),
      { numRuns: 500 },
    );
  });
});

/** Strings drawn from pieces that matter to JSON and to the fast paths, among any text. */
const text = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc
    .array(
      fc.constantFrom('"', "\\", "\u0001", "\t", "\u007f", "é", "😀", "\ud800", ":", "a", "1"),
      {
        maxLength: 4,
      },
    )
    .map((pieces) => pieces.join("")),
);

/** What the reader without its fast paths gives for a line: zod's output, or nothing. */
function slowRead(line: string): unknown {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return undefined;
  }
  const parsed = snapshotLine.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}

describe("grantLine", () => {
  it("reads the writer's grant lines", () => {
    const line = JSON.stringify(grant("team:7:member", { type: "user", id: "42" }));
    expect(grantLine(line)).toStrictEqual(slowRead(line));
  });

  it("gives what JSON.parse and zod give, or nothing, for any strings and any spelling of a grant", () => {
    const spelled = fc.tuple(text, text, text, text, fc.nat(5)).map(([id, e, type, pid, how]) => {
      const quoted = [id, e, type, pid].map((s) => (how === 0 ? `"${s}"` : JSON.stringify(s)));
      const [qi, qe, qt, qp] = quoted;
      const spellings = [
        `{"kind":"grant","id":${qi},"entitlement":${qe},"principal":{"type":${qt},"id":${qp}}}`,
        `{"kind":"grant","id":${qi},"entitlement":${qe},"principal":{"type":${qt},"id":${qp}}}`,
        `{"kind":"grant", "id":${qi},"entitlement":${qe},"principal":{"type":${qt},"id":${qp}}}`,
        `{"kind":"grant","id":${qi},"entitlement":${qe},"principal":{"id":${qp},"type":${qt}}}`,
        `{"kind":"grant","id":${qi},"entitlement":${qe},"principal":{"type":${qt},"id":${qp}},"x":1}`,
        `{"kind":"grant","id":${qi},"entitlement":${qe},"principal":{"type":${qt},"id":${qp}}}x`,
      ];
      return spellings[how] as string;
    });
    fc.assert(
      fc.property(spelled, (line) => {
        const fast = grantLine(line);
        if (fast !== undefined) {
          expect(fast).toStrictEqual(slowRead(line));
          expect(JSON.stringify(fast)).toBe(JSON.stringify(slowRead(line)));
        }
      }),
      { numRuns: 3000 },
    );
  });
});

/** A record of each kind in the writer's form, with every optional field present. */
const WRITTEN: Record<string, unknown>[] = [
  { kind: "resource_type", id: "user", displayName: "User", traits: ["user"] },
  {
    kind: "resource",
    type: "user",
    id: "1",
    displayName: "Zoë",
    status: "enabled",
    user: { login: "zoe", emails: ["z@example.com"], givenName: "Zoë", familyName: "Ö" },
    profile: { title: "x", level: 3, manager: false },
  },
  {
    kind: "entitlement",
    id: "team:7:member",
    resource: { type: "team", id: "7" },
    slug: "member",
    displayName: "Member",
    purpose: "assignment",
    grantableTo: ["user"],
  },
  grant("team:7:member", { type: "user", id: "1" }) as unknown as Record<string, unknown>,
];

/** Every path to a field in a record, objects' fields and arrays' first item. */
function paths(value: unknown, prefix: string[] = []): string[][] {
  if (typeof value !== "object" || value === null) return [prefix];
  const keys = Array.isArray(value) ? (value.length ? ["0"] : []) : Object.keys(value);
  return [
    prefix,
    ...keys.flatMap((k) => paths((value as Record<string, unknown>)[k], [...prefix, k])),
  ];
}

const REPLACEMENTS: unknown[] = [
  undefined,
  null,
  1,
  1.5,
  true,
  "s",
  "",
  [],
  ["x"],
  [1],
  {},
  { type: "t", id: "i" },
  "user",
  "group",
  "enabled",
  "disabled",
  "assignment",
  "resource",
  "grant",
];

/** `record` with the field at `path` replaced by `value` (removed when undefined). */
function replaced(record: unknown, path: string[], value: unknown): unknown {
  const copy = structuredClone(record) as Record<string, unknown>;
  if (path.length === 0) return value;
  let at: Record<string, unknown> = copy;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string, unknown>;
  const last = path[path.length - 1] as string;
  if (value === undefined && !Array.isArray(at)) delete at[last];
  else at[last] = value;
  return copy;
}

describe("canonicalLine", () => {
  it("takes the writer's records, each with its optional fields or without", () => {
    for (const record of WRITTEN) expect(canonicalLine(record)).toBe(record);
    const bare = { kind: "resource", type: "user", id: "1", displayName: "Zoë" };
    expect(canonicalLine(bare)).toBe(bare);
  });

  it("takes a record only when zod takes it and gives it back the same, for every field of every kind replaced, removed, moved or added", () => {
    const variants: unknown[] = [];
    for (const record of WRITTEN) {
      for (const path of paths(record))
        for (const value of REPLACEMENTS) variants.push(replaced(record, path, value));
      const keys = Object.keys(record);
      variants.push(Object.fromEntries(Object.entries(record).reverse()));
      variants.push({ ...record, extra: 1 });
      variants.push(JSON.parse(JSON.stringify(record).replace("{", '{"__proto__":{},')));
      variants.push(Object.fromEntries(keys.slice(1).map((k) => [k, record[k]])));
    }
    variants.push(
      JSON.parse(
        '{"kind":"resource","type":"u","id":"1","displayName":"d","profile":{"__proto__":"x"}}',
      ),
    );
    let taken = 0;
    for (const variant of variants) {
      if (canonicalLine(variant) === undefined) continue;
      taken++;
      const parsed = snapshotLine.safeParse(variant);
      expect(parsed.success, JSON.stringify(variant)).toBe(true);
      expect(JSON.stringify(parsed.data)).toBe(JSON.stringify(variant));
      expect(parsed.data).toStrictEqual(variant);
    }
    // Many variants are still records (a string for a string, an optional field removed).
    expect(taken).toBeGreaterThan(40);
  });
});

describe("readCompleteSnapshot's visitor", () => {
  it("gets a line's text only when JSON.parse gives the record back exactly", async () => {
    const resource = WRITTEN[1] as Record<string, unknown>;
    const body = [
      JSON.stringify(resource),
      JSON.stringify(Object.fromEntries(Object.entries(resource).reverse())),
      JSON.stringify({ ...resource, id: "2", extra: 1 }),
      JSON.stringify(grant("team:7:member", { type: "user", id: "1" })),
      ' {"kind":"grant","id":"g","entitlement":"e","principal":{"type":"user","id":"2"}}',
      '{"kind":"grant","id":"h","entitlement":"e","principal":{"id":"3","type":"user"}}',
    ];
    const start = { kind: "sync_start", syncId: "s", connector: "c", startedAt: "t", version: 1 };
    const counts = { resource_type: 0, resource: 3, entitlement: 0, grant: 3 };
    const end = { kind: "sync_end", syncId: "s", status: "complete", finishedAt: "t", counts };
    const lines = [
      JSON.stringify(start),
      ...body,
      JSON.stringify({ ...end, skipped: { dangling_grant: 0 } }),
    ];
    const seen: (string | undefined)[] = [];
    const read = await readCompleteSnapshot(
      (async function* () {
        yield lines;
      })(),
      (line, _, text) => {
        seen.push(text);
        if (text !== undefined) expect(JSON.parse(text)).toStrictEqual(line);
      },
    );
    expect(read).toHaveProperty("end");
    expect(seen).toEqual([body[0], undefined, undefined, body[3], body[4], undefined]);
  });
});
