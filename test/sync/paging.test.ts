import { describe, expect, it } from "vitest";
import {
  firstIndexCursor,
  firstPageCursor,
  nextIndexCursor,
  nextPageCursor,
  type PageCursor,
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
