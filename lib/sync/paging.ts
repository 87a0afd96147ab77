import { createHash } from "node:crypto";
import { z } from "zod";
import { BOUND_DEFAULTS, type Bound } from "../config";
import { ConnectorError } from "../errors";

/**
 * The paging decisions every connector shares. A cursor travels in its job (through a queue in the
 * cloud runtime), so each decision is made from the cursor and the page in hand: the next cursor,
 * or undefined when the list is done. A cursor carries a fingerprint of the page before, so a
 * server that ignores the paging parameter and serves the same page again is noticed.
 */

/** The server served the same page twice: it ignores the paging parameter. */
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

  static override is(error: unknown): error is TooManyPagesError {
    return error instanceof TooManyPagesError;
  }
}

/** The list's size changed between its pages: items shifted, so one could be missed. */
export class ListChangedError extends ConnectorError {
  override name = "ListChangedError";
  override readonly code: string = "list_changed";
}

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

/** A short digest of a page's ids. */
export function pageFingerprint(ids: readonly string[]): string {
  return createHash("sha256").update(ids.join("\n")).digest("base64url");
}

const seenSoFar = {
  /** Items read by the pages before this one. */
  seen: z.number().int().nonnegative(),
  /** Fingerprint of the previous page. */
  previous: z.string().optional(),
  /** Pages read so far, and the repeat detector's anchor page (Brent's cycle detection). */
  pages: z.number().int().nonnegative().optional(),
  anchor: z.string().optional(),
  /** The list's total as its first page gave it. */
  total: z.number().int().nonnegative().optional(),
};

type SeenSoFar = {
  seen: number;
  previous?: string;
  pages?: number;
  anchor?: string;
  total?: number;
};

/**
 * Tracks a list's pages in constant space: a page equal to any earlier one (A, B, A, B as well as
 * A, A) is found by comparing each page with an anchor page that moves to the current page
 * whenever the count of pages reaches a power of two (Brent's cycle detection): for a cycle of
 * `c` pages after `r` others, within 2 * max(r, c) + c pages. Returns the fields of the next
 * cursor.
 */
function trackPages(
  cursor: SeenSoFar,
  fingerprint: string,
  seen: number,
  onRepeat: () => never,
  what: string,
  total: number | undefined,
): SeenSoFar {
  checkTotal(cursor, total, what);
  const known = cursor.total ?? total;
  if (fingerprint === cursor.anchor) onRepeat();
  const pages = (cursor.pages ?? 0) + 1;
  const isPowerOfTwo = (pages & (pages - 1)) === 0;
  return {
    seen,
    previous: fingerprint,
    pages,
    anchor: isPowerOfTwo ? fingerprint : cursor.anchor,
    ...(known === undefined ? {} : { total: known }),
  };
}

/** The page cap of a caller that names none (a connector passes its own). */
const DEFAULT_MAX_PAGES: Bound = {
  value: BOUND_DEFAULTS.maxPagesPerList,
  variable: "CONNECTOR_<APP>_MAX_PAGES_PER_LIST",
};

/**
 * A list longer than `maxPages` is taken for a server that never stops (no page is ever empty or
 * short): the run fails rather than grow without end.
 */
function requireAnotherPage(
  tracked: SeenSoFar,
  what: string,
  maxPages: Bound = DEFAULT_MAX_PAGES,
): void {
  if ((tracked.pages ?? 0) >= maxPages.value) throw new TooManyPagesError(what, maxPages);
}

/** Page-number paging (`page`, `pageSize`). */
export const pageCursor = z.object({ page: z.number().int().nonnegative(), ...seenSoFar }).strict();
export type PageCursor = z.infer<typeof pageCursor>;

export function firstPageCursor(page: number): PageCursor {
  return { page, seen: 0 };
}

/**
 * After a page-number page: done on an empty page, or on a page shorter than asked for once the
 * running count reaches `totalItems` (or without `totalItems`). A short page before `totalItems`
 * means the server caps the page size: go on. A full page never ends the list, even when the
 * count reaches `totalItems`: an item served twice counts twice, and stopping on the count would
 * leave the last items unread. A repeated page fails rather than loops; `hint` says how to read
 * the list anyway. A `totalItems` that changes between pages fails the list (`ListChangedError`).
 */
export function nextPageCursor(options: {
  cursor: PageCursor;
  ids: readonly string[];
  totalItems: number | undefined;
  pageSize: number;
  /** The page cap and its variable (the connector's MAX_PAGES_PER_LIST). */
  maxPages?: Bound;
  what: string;
  hint: string;
}): PageCursor | undefined {
  const { cursor, ids, totalItems, pageSize, what } = options;
  if (ids.length === 0) return undefined;
  const fingerprint = pageFingerprint(ids);
  if (fingerprint === cursor.previous) {
    throw new RepeatedPageError(
      `${what}: page ${cursor.page} repeated page ${cursor.page - 1}, so the server ignores the page parameter; stopped instead of looping. ${options.hint}`,
    );
  }
  const seen = cursor.seen + ids.length;
  const tracked = trackPages(
    cursor,
    fingerprint,
    seen,
    () => {
      throw new RepeatedPageError(
        `${what}: page ${cursor.page} repeated an earlier page, so the server's pages go round in a cycle; stopped instead of looping. ${options.hint}`,
      );
    },
    what,
    totalItems,
  );
  if (ids.length < pageSize && (totalItems === undefined || seen >= totalItems)) return undefined;
  requireAnotherPage(tracked, what, options.maxPages);
  return { page: cursor.page + 1, ...tracked };
}

/** Index paging (`startIndex`, `count`), as SCIM lists page. */
export const indexCursor = z
  .object({ startIndex: z.number().int().nonnegative(), ...seenSoFar })
  .strict();
export type IndexCursor = z.infer<typeof indexCursor>;

export function firstIndexCursor(startIndex: number): IndexCursor {
  return { startIndex, seen: 0 };
}

/**
 * After an index page: done on an empty page, on the running count reaching `totalResults`, or
 * on a page repeating the previous one (a server that ignores `startIndex`). A repeat before
 * `totalResults` is reached means the list cannot be read whole: that fails rather than passing
 * a partial list off as complete.
 */
export function nextIndexCursor(options: {
  cursor: IndexCursor;
  ids: readonly string[];
  totalResults: number | undefined;
  /** The page cap and its variable (the connector's MAX_PAGES_PER_LIST). */
  maxPages?: Bound;
  what: string;
}): IndexCursor | undefined {
  const { cursor, ids, totalResults, what } = options;
  if (ids.length === 0) return undefined;
  const fingerprint = pageFingerprint(ids);
  if (fingerprint === cursor.previous) {
    if (totalResults !== undefined && cursor.seen < totalResults) {
      throw new RepeatedPageError(
        `${what}: the page at startIndex ${cursor.startIndex} repeated the previous one after ${cursor.seen} of ${totalResults} resources; the server ignores startIndex, so the list cannot be read whole`,
      );
    }
    return undefined;
  }
  const seen = cursor.seen + ids.length;
  const tracked = trackPages(
    cursor,
    fingerprint,
    seen,
    () => {
      throw new RepeatedPageError(
        `${what}: the page at startIndex ${cursor.startIndex} repeated an earlier page after ${cursor.seen} resources, so the server's pages go round in a cycle; the list cannot be read whole`,
      );
    },
    what,
    totalResults,
  );
  if (totalResults !== undefined && seen >= totalResults) return undefined;
  requireAnotherPage(tracked, what, options.maxPages);
  return { startIndex: cursor.startIndex + ids.length, ...tracked };
}
