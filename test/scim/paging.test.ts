import { describe, expect, it } from "vitest";
import {
  firstIndexCursor,
  type IndexCursor,
  indexQuery,
  ListShortOfTotalError,
  nextIndexCursor,
  pageFingerprint,
  RepeatedPageError,
} from "../../lib/sync";

const first = firstIndexCursor(1);
const pageSize = { value: 10, variable: "CONNECTOR_EMAILAUTH_PAGE_SIZE", max: 1000 };
const ids = (from: number, n: number) => Array.from({ length: n }, (_, i) => String(from + i));

const next = (cursor: IndexCursor, page: string[], totalResults?: number) =>
  nextIndexCursor({ cursor, ids: page, totalResults, pageSize, what: "Valimail users" });

/** Follows `cursor` through pages served by `serve`, as the jobs of a sync would. */
function walk(serve: (query: ReturnType<typeof indexQuery>) => { ids: string[]; total?: number }) {
  const queries: ReturnType<typeof indexQuery>[] = [];
  let cursor: IndexCursor | undefined = first;
  while (cursor && queries.length < 100) {
    const query = indexQuery(cursor, pageSize.value);
    queries.push(query);
    const page = serve(query);
    cursor = next(cursor, page.ids, page.total);
  }
  return queries;
}

describe("SCIM list paging", () => {
  it("advances startIndex by the items received, and asks a capped server for what it serves", () => {
    const cursor = next(first, ids(1, 7), 20);

    expect(cursor).toMatchObject({ startIndex: 8, seen: 7, size: 7 });
    expect(indexQuery(cursor ?? first, pageSize.value)).toEqual({ startIndex: 8, count: 7 });
  });

  it("ends on an empty page, and on the count reaching totalResults on a page no longer than asked", () => {
    expect(next(first, [], 0)).toBeUndefined();
    expect(next({ startIndex: 11, seen: 10 }, ids(11, 5), 15)).toBeUndefined();
    expect(next({ startIndex: 11, seen: 10, most: 10 }, ids(11, 10), 20)).toBeUndefined();
    // A page longer than asked carries an item twice: the count it reaches proves nothing.
    expect(next({ startIndex: 11, seen: 10, most: 10 }, ids(10, 11), 21)).toMatchObject({
      startIndex: 22,
    });
  });

  it("fails a list whose page repeats before totalResults, and ends one whose total was reached", () => {
    const cursor = next(first, ids(1, 10), 30) ?? first;

    expect(() => next(cursor, ids(1, 10), 30)).toThrow(
      /Valimail users: the page at startIndex 11 repeated the previous one after 10 of 30 resources; the server ignores startIndex, so the list cannot be read whole. Set CONNECTOR_EMAILAUTH_PAGE_SIZE to at least 30/,
    );
    const long = next(first, ids(1, 12), 12) ?? first;
    expect(next(long, ids(1, 12), 12)).toBeUndefined();
  });

  it("without a total, reads a repeated page whole only when the same request without its first item answers the rest", () => {
    const whole = walk(({ exclude }) => ({ ids: ids(1, 4).filter((id) => id !== exclude) }));
    expect(whole).toEqual([
      { startIndex: 1, count: 10 },
      { startIndex: 5, count: 4 },
      { startIndex: 5, count: 4, exclude: "1" },
    ]);

    // A server that ignores startIndex and caps count at 4, whatever the list's length.
    const capped = () =>
      walk(({ exclude }) => ({
        ids: ids(1, 9)
          .filter((id) => id !== exclude)
          .slice(0, 4),
      }));
    expect(capped).toThrow(RepeatedPageError);
    expect(capped).toThrow(
      /Valimail users: the page at startIndex 5 repeated the previous one \(4 resources\), so the server ignores startIndex \(or starts again past the list's end\), and it sends no totalResults to show where the list ends. Asked again without the first of them, it answered 4 resources rather than the other 3, so nothing proves those 4 are the whole list; stopped rather than publish it. It serves at most 4 items a page whatever CONNECTOR_EMAILAUTH_PAGE_SIZE \(10\) asks, so no page size reads the list whole/,
    );
  });

  it("without a total, a short page ends the list only after a page as long as asked, then startIndex 0 is read", () => {
    // 23 items, honest pages: 10, 10, 3 (the 3 ends it), then the probe at startIndex 0.
    const list = ids(1, 23);
    const queries = walk(({ startIndex, count }) => ({
      ids: list.slice(Math.max(1, startIndex) - 1, Math.max(1, startIndex) - 1 + count),
    }));
    expect(queries).toEqual([
      { startIndex: 1, count: 10 },
      { startIndex: 11, count: 10 },
      { startIndex: 21, count: 10 },
      { startIndex: 0, count: 1 },
    ]);

    // A first page short of what was asked proves nothing: a capped server serves the rest.
    const capped = walk(({ startIndex }) => ({ ids: list.slice(startIndex - 1, startIndex + 5) }));
    expect(capped.slice(0, 3)).toEqual([
      { startIndex: 1, count: 10 },
      { startIndex: 7, count: 6 },
      { startIndex: 13, count: 6 },
    ]);
    expect(capped.at(-1)).toEqual({ startIndex: 0, count: 1 });
  });

  it("reads the first item of a server that counts startIndex from 0, with or without a total", () => {
    const list = ids(1, 5);
    const zeroBased = (total?: number) => {
      const served: string[] = [];
      walk(({ startIndex, count }) => {
        const page = list.slice(startIndex, startIndex + count);
        served.push(...page);
        return { ids: page, total };
      });
      return new Set(served);
    };

    expect(zeroBased(5)).toEqual(new Set(list));
    expect(zeroBased(undefined)).toEqual(new Set(list));
  });

  it("fails a list that ends short of its total, naming how many may be missing", () => {
    const cursor: IndexCursor = { startIndex: 9, seen: 8, most: 10, first: pageFingerprint(["1"]) };

    expect(() => next(cursor, [], 10)).toThrow(ListShortOfTotalError);
    expect(() => next(cursor, [], 10)).toThrow(
      /^Valimail users: the pages ended after 8 of the 10 items its totalResults announced \(nothing at startIndex 9\), so the server's pages skip items or its totalResults counts items it does not serve; stopped rather than publish a list that may miss 2$/,
    );
    // One short: startIndex 0 is asked, and answers the first item again.
    const probe = next({ ...cursor, seen: 9 }, [], 10) ?? first;
    expect(probe).toMatchObject({ startIndex: 0, probe: "zero" });
    expect(() => next(probe, ["1"], 10)).toThrow(
      /after 9 of the 10 items its totalResults announced \(startIndex 0 answered the first item again: the server counts from 1\)/,
    );
  });
});
