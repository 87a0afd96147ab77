import { describe, expect, it } from "vitest";
import {
  firstIndexCursor,
  firstPageCursor,
  indexPagesAhead,
  ListShortOfTotalError,
  nextIndexCursor,
  nextPageCursor,
  PAGES_AHEAD,
  type PageCursor,
  pageQuery,
  pagesAhead,
  RepeatedPageError,
} from "../../lib/sync";

const PAGE_SIZE = { value: 10, variable: "PAGE_SIZE", max: 100 };

const page = (label: string) => Array.from({ length: 10 }, (_, i) => `${label}-${i}`);

/** Reads pages from `serve(n)` until the list ends or fails; returns the pages read. */
function walk(serve: (n: number) => string[], limit = 10_000): { pages: number; error?: unknown } {
  let cursor: PageCursor | undefined = firstPageCursor(1);
  let pages = 0;
  try {
    while (cursor && pages < limit) {
      const ids = serve(pages);
      pages++;
      cursor = nextPageCursor({
        cursor,
        ids,
        totalItems: undefined,
        pageSize: PAGE_SIZE,
        what: "users/list",
      });
    }
    return { pages };
  } catch (error) {
    return { pages, error };
  }
}

describe("paging sees any repeated page, in constant space", () => {
  it("stops a list whose pages alternate A, B, A, B", () => {
    const result = walk((n) => page(n % 2 === 0 ? "A" : "B"));

    expect(result.error).toBeInstanceOf(RepeatedPageError);
    expect((result.error as Error).message).toMatch(
      /^users\/list: page \d+ repeated an earlier page, so the server's pages go round in a cycle/,
    );
    expect(result.pages).toBeLessThanOrEqual(4);
  });

  it("stops any cycle within a few turns of it, after any run-in", () => {
    for (const [runIn, cycle] of [
      [0, 3],
      [5, 7],
      [40, 2],
      [3, 100],
    ] as const) {
      const result = walk((n) => page(n < runIn ? `lead${n}` : `c${(n - runIn) % cycle}`));
      expect(result.error).toBeInstanceOf(RepeatedPageError);
      // Brent: the anchor settles on the first power of two past both, then one turn finds it.
      expect(result.pages).toBeLessThanOrEqual(2 * Math.max(runIn, cycle) + cycle + 1);
    }
  });

  it("reads a long list of distinct pages to its end", () => {
    const result = walk((n) => (n < 3_000 ? page(`p${n}`) : page("last").slice(0, 3)));
    expect(result.error).toBeUndefined();
    expect(result.pages).toBe(3_001);
  });

  it("keeps the cursor small however long the list", () => {
    let cursor: PageCursor | undefined = firstPageCursor(1);
    for (let n = 0; n < 5_000 && cursor; n++) {
      cursor = nextPageCursor({
        cursor,
        ids: page(`p${n}`),
        totalItems: undefined,
        pageSize: PAGE_SIZE,
        what: "w",
      });
    }
    expect(JSON.stringify(cursor).length).toBeLessThan(200);
  });

  it("stops a SCIM list that cycles before totalResults", () => {
    let cursor = firstIndexCursor(1);
    const run = () => {
      for (let n = 0; n < 100; n++) {
        const next = nextIndexCursor({
          cursor,
          ids: page(n % 2 === 0 ? "A" : "B"),
          totalResults: 1_000,
          pageSize: PAGE_SIZE,
          what: "Valimail users",
        });
        if (!next) return;
        cursor = next;
      }
    };
    expect(run).toThrow(/Valimail users: the page at startIndex \d+ repeated an earlier page/);
  });
});

describe("a page-number list is complete only when proven", () => {
  const next = (cursor: PageCursor, ids: string[], totalItems?: number) =>
    nextPageCursor({ cursor, ids, totalItems, pageSize: PAGE_SIZE, what: "BlackLine users" });

  it("goes on after a first page shorter than asked, at the size served, and ends on a shorter one", () => {
    const second = next(firstPageCursor(1), page("a").slice(0, 4)) ?? firstPageCursor(1);

    expect(pageQuery(second, PAGE_SIZE.value)).toEqual({ page: 2, pageSize: 4 });
    const third = next(second, page("b").slice(0, 4)) ?? firstPageCursor(1);
    expect(pageQuery(third, PAGE_SIZE.value)).toEqual({ page: 3, pageSize: 4 });
    expect(next(third, page("c").slice(0, 3))).toBeUndefined();
    expect(next(second, [])).toBeUndefined();
  });

  it("fails a page repeated without totalItems, and pages that end before the total", () => {
    const second = next(firstPageCursor(1), page("a").slice(0, 4)) ?? firstPageCursor(1);

    expect(() => next(second, page("a").slice(0, 4))).toThrow(
      /^BlackLine users: page 2 repeated page 1, so the server ignores the page parameter, and it sends no totalItems, so nothing proves that its 4 items are the whole list/,
    );
    const full = next(firstPageCursor(1), page("a"), 25) ?? firstPageCursor(1);
    expect(() => next(full, [], 25)).toThrow(ListShortOfTotalError);
    expect(() => next(full, [], 25)).toThrow(
      "BlackLine users: the pages ended after 10 of the 25 items its totalItems announced (page 2 is empty), so the server's pages skip items or its totalItems counts items it does not serve; stopped rather than publish a list that may miss 15",
    );
  });
});

describe("the pages asked for ahead of a list's current one", () => {
  it("are the next PAGES_AHEAD the list's total says exist, at the page size it is read at", () => {
    const query = { page: 3, pageSize: 100 };

    // 200 items before page 3 (pages 1 and 2): page 4 starts at item 301, page 5 at 401.
    expect(PAGES_AHEAD).toBe(2);
    expect(pagesAhead({ page: 3, seen: 200, total: 1000 }, query)).toEqual([
      { page: 4, pageSize: 100 },
      { page: 5, pageSize: 100 },
    ]);
    expect(pagesAhead({ page: 3, seen: 200, total: 301 }, query)).toEqual([
      { page: 4, pageSize: 100 },
    ]);
    expect(pagesAhead({ page: 3, seen: 200, total: 300 }, query)).toEqual([]);
  });

  it("are none without a total: only the pages themselves show where such a list ends", () => {
    expect(pagesAhead({ page: 3, seen: 200 }, { page: 3, pageSize: 100 })).toEqual([]);
  });
});

describe("the index pages asked for ahead of a list's current one", () => {
  it("start where the one before ends if served whole, as far as the total goes, and never for a probe", () => {
    const query = { startIndex: 201, count: 100 };

    expect(indexPagesAhead({ startIndex: 201, seen: 200, total: 1000 }, query)).toEqual([
      { startIndex: 301, count: 100 },
      { startIndex: 401, count: 100 },
    ]);
    expect(indexPagesAhead({ startIndex: 201, seen: 200, total: 350 }, query)).toEqual([
      { startIndex: 301, count: 100 },
    ]);
    expect(indexPagesAhead({ startIndex: 201, seen: 200 }, query)).toEqual([]);
    expect(
      indexPagesAhead(
        { startIndex: 0, seen: 200, total: 1000, probe: "zero" },
        { startIndex: 0, count: 1 },
      ),
    ).toEqual([]);
  });
});
