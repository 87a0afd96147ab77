import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { userRecords } from "../../../lib/connectors/blackline/mappers";
import { listResponse, user } from "../../../lib/connectors/blackline/models";
import { readRecordsPage } from "../../../lib/connectors/blackline/recordsPage";
import { parseEach, parseResponse } from "../../../lib/http";
import type { SnapshotRecord } from "../../../lib/snapshot";
import "../../property/settings";

const names = { where: "BlackLine users, page 3", what: "BlackLine users, page 3 (GET /v1/users)" };

/** The outcome of a page read: its ids, records and total, or the message it fails with. */
function outcome(read: () => { ids: string[]; records: SnapshotRecord[]; totalItems?: number }) {
  try {
    const { ids, records, totalItems } = read();
    return { ids, records: JSON.stringify(records), totalItems };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** The page read whole, as `BlacklineApi.listPage` reads it and the sync maps it. */
function whole(bytes: Buffer) {
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString("utf8"));
  } catch {
    body = bytes.toString("utf8");
  }
  const page = parseResponse(listResponse, { body }, names.what);
  const items = parseEach(user, page.items, (index) => `${names.where}, item ${index + 1}`);
  return {
    ids: items.map((item) => item.id),
    records: items.flatMap(userRecords),
    totalItems: page.totalItems,
  };
}

const goodUser = fc.record(
  {
    id: fc.oneof(fc.nat(), fc.stringMatching(/^[A-Za-z0-9_-]{1,10}$/)),
    loginId: fc.string({ minLength: 1, unit: "grapheme" }),
    fullName: fc.option(fc.string({ unit: "grapheme" })),
    email: fc.option(fc.constantFrom("a@example.com", "Zoë@example.com", '"},{"@x')),
    isActive: fc.option(fc.boolean()),
    defaultRoleId: fc.option(fc.nat({ max: 40 })),
    roles: fc.option(
      fc.array(fc.oneof(fc.nat({ max: 40 }), fc.record({ id: fc.nat({ max: 40 }) }))),
    ),
  },
  { requiredKeys: ["id", "loginId"] },
);
/** Mostly good users; now and then one the schema refuses. */
const anyUser = fc.oneof(
  { weight: 20, arbitrary: goodUser },
  { weight: 1, arbitrary: fc.constantFrom({ id: ".." }, { id: 1, loginId: "" }, 5, null, []) },
);
/** A page body: well formed, or with one of the faults a server may send. */
const body = fc
  .record({
    items: fc.array(anyUser, { maxLength: 600 }),
    totalItems: fc.oneof(fc.nat(), fc.constantFrom(-1, 1.5, "7", undefined)),
    fault: fc.constantFrom("none", "none", "none", "items twice", "cut", "items not an array"),
  })
  .map(({ items, totalItems, fault }) => {
    const json = JSON.stringify({ items, totalItems });
    if (fault === "items twice") return `{"items":[{"id":1,"loginId":"x"}],${json.slice(1)}`;
    if (fault === "cut") return json.slice(0, Math.floor(json.length * 0.9));
    if (fault === "items not an array")
      return json.replace('"items":[', '"items":{"a":[').replace(/\]([^\]]*)$/, "]}$1");
    return json;
  });

describe("a users page read item by item", () => {
  it("gives the records, ids and total of the page read whole, or fails with the same message", () => {
    fc.assert(
      fc.property(body, (text) => {
        const bytes = Buffer.from(text);
        const handed: SnapshotRecord[] = [];
        const sink = {
          write: (records: readonly SnapshotRecord[]) => void handed.push(...records),
        };
        let read: ReturnType<typeof readRecordsPage>;
        const piecewise = outcome(() => {
          read = readRecordsPage(bytes, user, userRecords, names, sink);
          if (!read) return whole(bytes);
          return { ...read, records: [...handed, ...read.records] };
        });
        expect(piecewise).toEqual(outcome(() => whole(bytes)));
        // Records go to the sink only from a page whose items are read as JSON.parse reads them.
        if (read === undefined && handed.length > 0) expect(piecewise).toHaveProperty("error");
      }),
      { numRuns: 150 },
    );
  });

  it("hands its records to the sink in runs as it reads, keeping only the rest", () => {
    const items = Array.from({ length: 1000 }, (_, id) => ({
      id,
      loginId: `u${id}`,
      defaultRoleId: 3,
    }));
    const bytes = Buffer.from(JSON.stringify({ items, totalItems: 1000 }));
    const runs: number[] = [];
    const sink = { write: (records: readonly SnapshotRecord[]) => void runs.push(records.length) };
    const read = readRecordsPage(bytes, user, userRecords, names, sink);
    expect(runs.length).toBeGreaterThan(5);
    expect(runs.reduce((a, b) => a + b, 0) + (read?.records.length ?? 0)).toBe(2000);
    expect(read?.records.length).toBeLessThan(runs[0] as number);
    expect(read?.ids).toHaveLength(1000);
  });
});
