import { createHash } from "node:crypto";
import * as z from "zod";
import { BOUND_DEFAULTS, type Bound } from "../config";
import { ConnectorError } from "../errors";

/**
 * The paging decisions every connector shares. A cursor travels in its job (through a queue in the
 * cloud runtime), so each decision is made from the cursor and the page in hand: the next cursor,
 * or undefined when the list is done. No client loops over pages.
 *
 * A list is complete only when proven, by one rule for both paging styles (`page` and `pageSize`;
 * `startIndex` and `count`):
 * - an empty page (and, when the server gave a total, every item of it counted);
 * - the count reaching the total, on a page no longer than asked (a longer page shows a server
 *   that serves items twice, which inflates the count);
 * - a page shorter than asked from a server known to honour the page size: an earlier page served
 *   at least as many items as are asked now.
 * A first page shorter than asked proves nothing (the server may cap the page size silently), so
 * the list goes on with pages of the size it served, which both ways of counting a capped page's
 * offset agree on. Anything else fails the list with a message that says what the server did and
 * which setting, if any, reads the list whole: the same page twice before any proof (the paging
 * parameter is ignored), pages that go round in a cycle (found in constant space by Brent's
 * method), an empty page before the total, a total that changes, more pages than the page cap.
 * Page-number paging is here; index paging, with its two probes, in `indexPaging.ts`.
 */

/** The server served the same page twice, or its pages go round: it ignores the paging parameter. */
export class RepeatedPageError extends ConnectorError {
  override name = "RepeatedPageError";
  override readonly code: string = "repeated_page";
}

/** A list ran past the page cap (CONNECTOR_<APP>_MAX_PAGES_PER_LIST) without an end. */
export class TooManyPagesError extends ConnectorError {
  override name = "TooManyPagesError";
  override readonly code: string = "too_many_pages";

  constructor(what: string, maxPages: Bound) {
    super(
      `${what}: more than ${maxPages.value} pages, the most one list may have (${maxPages.variable}), and no end in sight; stopped rather than grow without end. If the list really is that long, raise ${maxPages.variable} or the page size; otherwise the server does not page as expected`,
    );
  }
}

/** The list's size changed between its pages: items shifted, so one could be missed. */
export class ListChangedError extends ConnectorError {
  override name = "ListChangedError";
  override readonly code: string = "list_changed";
}

/** The list's pages ended before its total was counted: an item may be missing. */
export class ListShortOfTotalError extends ConnectorError {
  override name = "ListShortOfTotalError";
  override readonly code: string = "list_short_of_total";
}

/** The page size a connector asks for, its variable and its largest value: what a hint may advise. */
export interface PageSize extends Bound {
  readonly max: number;
}

/** A short digest of a page's ids. */
export function pageFingerprint(ids: readonly string[]): string {
  return createHash("sha256").update(ids.join("\n")).digest("base64url");
}

export const seenSoFar = {
  /** Items read by the pages before this one. */
  seen: z.number().int().nonnegative(),
  /** Fingerprint of the previous page. */
  previous: z.string().optional(),
  /** Pages read so far, and the repeat detector's anchor page (Brent's cycle detection). */
  pages: z.number().int().nonnegative().optional(),
  anchor: z.string().optional(),
  /** The list's total as its first page gave it. */
  total: z.number().int().nonnegative().optional(),
  /** The page size asked after a first page shorter than asked: the size the server serves. */
  size: z.number().int().positive().optional(),
  /** The most items one page has served so far. */
  most: z.number().int().nonnegative().optional(),
};

export type SeenSoFar = {
  seen: number;
  previous?: string;
  pages?: number;
  anchor?: string;
  total?: number;
  size?: number;
  most?: number;
};

/** How messages name a list's pages in one paging style. */
export interface Style {
  /** Where this page was asked for: `page 3`, `the page at startIndex 101`. */
  at: string;
  /** The answer's total field: `totalItems`, `totalResults`. */
  totalField: string;
}

interface ListOptions {
  what: string;
  pageSize: PageSize;
  /** The page cap and its variable (the connector's MAX_PAGES_PER_LIST). */
  maxPages?: Bound;
}

/** What one page shows about its list. */
type Verdict =
  | { kind: "end"; total: number | undefined }
  | { kind: "next"; tracked: SeenSoFar }
  /** An empty page before the total was counted. */
  | { kind: "shortOfTotal"; total: number }
  /** The previous page again, before any proof of the end. */
  | { kind: "repeat"; total: number | undefined; served: number };

/**
 * The list's total as the first page gave it; a later page giving another total means items were
 * added or removed mid-list, and page boundaries moved (an item can slip between two pages).
 */
function checkTotal(cursor: { total?: number }, total: number | undefined, what: string) {
  if (cursor.total === undefined || total === undefined || total === cursor.total) return;
  throw new ListChangedError(
    `${what}: the list changed while it was read (${cursor.total} items on its first page, ${total} now), so an item may have been skipped; nothing is published: run the sync again`,
  );
}

/**
 * Tracks a list's pages in constant space: a page equal to any earlier one (A, B, A, B as well as
 * A, A) is found by comparing each page with an anchor page that moves to the current page
 * whenever the count of pages reaches a power of two (Brent's cycle detection): for a cycle of
 * `c` pages after `r` others, within 2 * max(r, c) + c pages.
 */
function trackPages(
  cursor: SeenSoFar,
  fingerprint: string,
  seen: number,
  total: number | undefined,
): SeenSoFar {
  const pages = (cursor.pages ?? 0) + 1;
  const isPowerOfTwo = (pages & (pages - 1)) === 0;
  return {
    seen,
    previous: fingerprint,
    pages,
    anchor: isPowerOfTwo ? fingerprint : cursor.anchor,
    ...(total === undefined ? {} : { total }),
  };
}

/** The page cap of a caller that names none (a connector passes its own). */
const DEFAULT_MAX_PAGES: Bound = {
  value: BOUND_DEFAULTS.maxPagesPerList,
  variable: "CONNECTOR_<APP>_MAX_PAGES_PER_LIST",
};

/** The one completeness rule (module header), for a page of `ids` asked with `asked` items. */
export function judge(
  cursor: SeenSoFar,
  ids: readonly string[],
  reported: number | undefined,
  asked: number,
  options: ListOptions,
  style: Style,
): Verdict {
  const { what } = options;
  checkTotal(cursor, reported, what);
  const total = cursor.total ?? reported;
  if (ids.length === 0) {
    return total !== undefined && cursor.seen < total
      ? { kind: "shortOfTotal", total }
      : { kind: "end", total };
  }
  const fingerprint = pageFingerprint(ids);
  if (fingerprint === cursor.previous) {
    return total !== undefined && cursor.seen >= total
      ? { kind: "end", total }
      : { kind: "repeat", total, served: ids.length };
  }
  if (fingerprint === cursor.anchor) {
    throw new RepeatedPageError(
      `${what}: ${style.at} repeated an earlier page, so the server's pages go round in a cycle; stopped instead of looping after ${cursor.seen} items: the list cannot be read whole`,
    );
  }
  const served = ids.length;
  const tracked = trackPages(cursor, fingerprint, cursor.seen + served, total);
  const proven =
    total === undefined
      ? served < asked && (cursor.most ?? 0) >= asked
      : tracked.seen >= total && served <= asked;
  if (proven) return { kind: "end", total };
  if ((tracked.pages ?? 0) >= (options.maxPages ?? DEFAULT_MAX_PAGES).value) {
    throw new TooManyPagesError(what, options.maxPages ?? DEFAULT_MAX_PAGES);
  }
  const firstPage = cursor.pages === undefined;
  const size = firstPage && served < asked ? served : cursor.size;
  return {
    kind: "next",
    tracked: {
      ...tracked,
      ...(size === undefined ? {} : { size }),
      most: Math.max(cursor.most ?? 0, served),
    },
  };
}

/**
 * The setting that reads a list whole when the server ignores the paging parameter, if any: a
 * page of the whole list, when the server serves the page size asked.
 */
export function wholeListHint(
  served: number,
  total: number | undefined,
  pageSize: PageSize,
): string {
  const { variable, max, value } = pageSize;
  if (served !== value) {
    return `It serves ${served < value ? "at most " : ""}${served} items a page whatever ${variable} (${value}) asks, so no page size reads the list whole`;
  }
  if (total !== undefined && total <= max) {
    return `Set ${variable} to at least ${total} so that one page holds the whole list`;
  }
  if (total === undefined && value < max) {
    return `Raise ${variable} (now ${value}, at most ${max}) so that one page can hold the whole list`;
  }
  return `No page size reads it whole: ${variable} goes up to ${max}`;
}

/** The pages ended `seen` items short of `total`; `evidence` says what showed the end. */
export function shortOfTotal(
  what: string,
  style: Style,
  seen: number,
  total: number,
  evidence: string,
) {
  return new ListShortOfTotalError(
    `${what}: the pages ended after ${seen} of the ${total} items its ${style.totalField} announced (${evidence}), so the server's pages skip items or its ${style.totalField} counts items it does not serve; stopped rather than publish a list that may miss ${total - seen}`,
  );
}

/** Page-number paging (`page`, `pageSize`). */
export const pageCursor = z.object({ page: z.number().int().nonnegative(), ...seenSoFar }).strict();
export type PageCursor = z.infer<typeof pageCursor>;

export function firstPageCursor(page: number): PageCursor {
  return { page, seen: 0 };
}

/** What to ask for next: the cursor's page, with the page size the list is read at. */
export function pageQuery(
  cursor: PageCursor,
  pageSize: number,
): { page: number; pageSize: number } {
  return { page: cursor.page, pageSize: cursor.size ?? pageSize };
}

/**
 * Pages asked for ahead of a list's current one: each job asks for the next ones as it starts,
 * so the list has this many and one on their way at once, and its pages come that many a round
 * trip instead of one.
 */
export const PAGES_AHEAD = 2;

/**
 * How many pages after the current one the list's total says exist, at most `PAGES_AHEAD`: with
 * `seen` items before it, at `pageSize` a page. None without a total: the pages alone prove the
 * end. Asked for ahead, pages are still judged one after another, in order, by their own jobs.
 */
export function stepsAhead(seen: number, pageSize: number, total: number | undefined): number[] {
  const steps: number[] = [];
  if (total === undefined) return steps;
  for (let step = 1; step <= PAGES_AHEAD; step++) {
    if (seen + step * pageSize >= total) break;
    steps.push(step);
  }
  return steps;
}

/** The pages after `query`'s to ask for ahead (`stepsAhead`). */
export function pagesAhead(
  cursor: PageCursor,
  query: { page: number; pageSize: number },
): Array<{ page: number; pageSize: number }> {
  return stepsAhead(cursor.seen, query.pageSize, cursor.total).map((step) => ({
    page: query.page + step,
    pageSize: query.pageSize,
  }));
}

/** After a page-number page: the next cursor, or undefined once the list is proven complete. */
export function nextPageCursor(options: {
  cursor: PageCursor;
  ids: readonly string[];
  totalItems: number | undefined;
  pageSize: PageSize;
  maxPages?: Bound;
  what: string;
}): PageCursor | undefined {
  const { cursor, ids, what } = options;
  const style: Style = { at: `page ${cursor.page}`, totalField: "totalItems" };
  const asked = pageQuery(cursor, options.pageSize.value).pageSize;
  const verdict = judge(cursor, ids, options.totalItems, asked, options, style);
  switch (verdict.kind) {
    case "end":
      return undefined;
    case "next":
      return { page: cursor.page + 1, ...verdict.tracked };
    case "shortOfTotal":
      throw shortOfTotal(what, style, cursor.seen, verdict.total, `page ${cursor.page} is empty`);
    case "repeat": {
      const repeated = `${what}: page ${cursor.page} repeated page ${cursor.page - 1}, so the server ignores the page parameter`;
      if (verdict.total === undefined) {
        throw new RepeatedPageError(
          `${repeated}, and it sends no totalItems, so nothing proves that its ${verdict.served} items are the whole list; stopped rather than publish it. A server that ignores the page parameter is read whole only when it says how many items the list has`,
        );
      }
      throw new RepeatedPageError(
        `${repeated}; stopped instead of looping after ${cursor.seen} of ${verdict.total} items. ${wholeListHint(verdict.served, verdict.total, options.pageSize)}`,
      );
    }
  }
}
