import { describe, expect, it } from "vitest";
import { firstIndexCursor, nextIndexCursor } from "../../lib/sync";

const firstListCursor = firstIndexCursor(1);

const ids = (from: number, n: number) => Array.from({ length: n }, (_, i) => String(from + i));

describe("SCIM list paging", () => {
  it("advances startIndex by the items received, whatever count was asked for", () => {
    const next = nextIndexCursor({
      cursor: firstListCursor,
      ids: ids(1, 7),
      totalResults: 20,
      what: "t",
    });
    expect(next).toMatchObject({ startIndex: 8, seen: 7 });
  });

  it("stops on an empty page, and when the running count reaches totalResults", () => {
    expect(
      nextIndexCursor({ cursor: firstListCursor, ids: [], totalResults: 5, what: "t" }),
    ).toBeUndefined();
    expect(
      nextIndexCursor({
        cursor: { startIndex: 11, seen: 10 },
        ids: ids(11, 5),
        totalResults: 15,
        what: "t",
      }),
    ).toBeUndefined();
  });

  it("stops when a page repeats and everything was read, and fails when it was not", () => {
    const first = nextIndexCursor({
      cursor: firstListCursor,
      ids: ids(1, 10),
      totalResults: undefined,
      what: "t",
    });
    expect(first).toBeDefined();
    const cursor = first ?? firstListCursor;
    expect(
      nextIndexCursor({ cursor, ids: ids(1, 10), totalResults: undefined, what: "t" }),
    ).toBeUndefined();
    expect(() =>
      nextIndexCursor({ cursor, ids: ids(1, 10), totalResults: 30, what: "Valimail users" }),
    ).toThrow(
      /Valimail users: the page at startIndex 11 repeated the previous one after 10 of 30 resources/,
    );
  });
});
