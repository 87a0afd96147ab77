import * as z from "zod";
import type { Bound } from "../config";
import {
  judge,
  type PageSize,
  pageFingerprint,
  RepeatedPageError,
  type Style,
  seenSoFar,
  shortOfTotal,
  stepsAhead,
  wholeListHint,
} from "./paging";

/**
 * Index paging (`startIndex`, `count`), as SCIM lists page, under the completeness rule of
 * `paging.ts`, and two probes of one request each where the total is missing or one item short:
 * - A page repeated without a total is asked for again without its first item (`exclude`, a
 *   filter): only a server whose answer is its whole list answers exactly the page's other items,
 *   so such a server (an unpaginated one, or one whose cap holds every item) is read whole, and
 *   one that serves the first items of a longer list fails.
 * - A list ended without its total, or one item short of it, is asked `startIndex` 0 with `count`
 *   1: RFC 7644 reads 0 as 1, so a server counting from 1 answers the first item again (written
 *   once), while one that counts from 0 answers the item its pages skipped.
 */
export const indexCursor = z
  .object({
    startIndex: z.number().int().nonnegative(),
    ...seenSoFar,
    /** Fingerprint of the list's first item: what the `startIndex` 0 probe is compared with. */
    first: z.string().optional(),
    /**
     * This request is a probe: `zero` asks `startIndex` 0 for one item; `exclude` asks the
     * repeated page again without the item of that id, expecting the page's other items.
     */
    probe: z
      .union([
        z.literal("zero"),
        z
          .object({
            exclude: z.string().min(1),
            expect: z.string(),
            served: z.number().int().positive(),
          })
          .strict(),
      ])
      .optional(),
  })
  .strict();
export type IndexCursor = z.infer<typeof indexCursor>;

export function firstIndexCursor(startIndex: number): IndexCursor {
  return { startIndex, seen: 0 };
}

/** What to ask for next: `startIndex`, `count`, and the id to leave out of a probe's answer. */
export function indexQuery(
  cursor: IndexCursor,
  pageSize: number,
): { startIndex: number; count: number; exclude?: string } {
  if (cursor.probe === "zero") return { startIndex: 0, count: 1 };
  const count = cursor.size ?? pageSize;
  return cursor.probe
    ? { startIndex: cursor.startIndex, count, exclude: cursor.probe.exclude }
    : { startIndex: cursor.startIndex, count };
}

/**
 * The pages after `query`'s to ask for ahead (`stepsAhead`), each where the one before it ends if
 * served whole; none for a probe. A page served short moves the ones after it, which are then
 * asked again where they really start.
 */
export function indexPagesAhead(
  cursor: IndexCursor,
  query: { startIndex: number; count: number; exclude?: string },
): Array<{ startIndex: number; count: number }> {
  if (cursor.probe !== undefined) return [];
  return stepsAhead(cursor.seen, query.count, cursor.total).map((step) => ({
    startIndex: query.startIndex + step * query.count,
    count: query.count,
  }));
}

/** After an index page: the next cursor (or probe), or undefined once the list is proven complete. */
export function nextIndexCursor(options: {
  cursor: IndexCursor;
  ids: readonly string[];
  totalResults: number | undefined;
  pageSize: PageSize;
  maxPages?: Bound;
  what: string;
}): IndexCursor | undefined {
  const { cursor, ids, what } = options;
  const style: Style = {
    at: `the page at startIndex ${cursor.startIndex}`,
    totalField: "totalResults",
  };
  if (cursor.probe === "zero") return afterZeroProbe(cursor, ids, what, style);
  if (cursor.probe) return afterExcludeProbe(cursor, cursor.probe, ids, options);
  const asked = indexQuery(cursor, options.pageSize.value).count;
  const verdict = judge(cursor, ids, options.totalResults, asked, options, style);
  const first = cursor.first ?? (ids[0] === undefined ? undefined : pageFingerprint([ids[0]]));
  const zeroProbe = (total?: number): IndexCursor => ({
    startIndex: 0,
    seen: cursor.seen,
    probe: "zero",
    ...(first === undefined ? {} : { first }),
    ...(total === undefined ? {} : { total }),
  });
  switch (verdict.kind) {
    case "end":
      return verdict.total === undefined ? zeroProbe() : undefined;
    case "next":
      return {
        startIndex: cursor.startIndex + ids.length,
        ...verdict.tracked,
        ...(first === undefined ? {} : { first }),
      };
    case "shortOfTotal":
      if (cursor.seen + 1 === verdict.total) return zeroProbe(verdict.total);
      throw shortOfTotal(
        what,
        style,
        cursor.seen,
        verdict.total,
        `nothing at startIndex ${cursor.startIndex}`,
      );
    case "repeat": {
      const repeated = `${what}: the page at startIndex ${cursor.startIndex} repeated the previous one`;
      if (verdict.total !== undefined) {
        throw new RepeatedPageError(
          `${repeated} after ${cursor.seen} of ${verdict.total} resources; the server ignores startIndex, so the list cannot be read whole. ${wholeListHint(verdict.served, verdict.total, options.pageSize)}`,
        );
      }
      // A repeated page has items: the first is left out of the probe's answer.
      const [exclude = "", ...others] = ids;
      return {
        startIndex: cursor.startIndex,
        seen: cursor.seen,
        ...(cursor.size === undefined ? {} : { size: cursor.size }),
        probe: { exclude, expect: pageFingerprint(others), served: ids.length },
      };
    }
  }
}

/**
 * After the `startIndex` 0 probe. Without a total the list was proven by its pages, and the probe's
 * item is either the first again or the one a server counting from 0 skipped: done either way.
 * One item short of the total, only a new item completes the list.
 */
function afterZeroProbe(
  cursor: IndexCursor,
  ids: readonly string[],
  what: string,
  style: Style,
): undefined {
  if (cursor.total === undefined) return undefined;
  const [item] = ids;
  if (item !== undefined && pageFingerprint([item]) !== cursor.first) return undefined;
  const answered =
    item === undefined ? "nothing" : "the first item again: the server counts from 1";
  throw shortOfTotal(what, style, cursor.seen, cursor.total, `startIndex 0 answered ${answered}`);
}

/** After the page was asked for again without its first item: done when the rest came back. */
function afterExcludeProbe(
  cursor: IndexCursor,
  probe: { expect: string; served: number },
  ids: readonly string[],
  options: { what: string; pageSize: PageSize },
): undefined {
  if (pageFingerprint(ids) === probe.expect) return undefined;
  const { served } = probe;
  throw new RepeatedPageError(
    `${options.what}: the page at startIndex ${cursor.startIndex} repeated the previous one (${served} resources), so the server ignores startIndex (or starts again past the list's end), and it sends no totalResults to show where the list ends. Asked again without the first of them, it answered ${ids.length} resources rather than the other ${served - 1}, so nothing proves those ${served} are the whole list; stopped rather than publish it. ${wholeListHint(served, undefined, options.pageSize)}`,
  );
}
