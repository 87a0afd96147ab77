import { z } from "zod";
import { pageFingerprint } from "../../sync";
import { FIRST_PAGE } from "./constants";
import { RepeatedPageError } from "./errors";

/**
 * Page-number paging (UPSTREAM.md assumption: `page`, 1-based, with `pageSize`). The cursor
 * travels in the job, so every decision is made from the cursor and the page in hand.
 */
export const pageCursor = z
  .object({
    page: z.number().int().min(FIRST_PAGE),
    /** Items read so far by the pages before this one. */
    seen: z.number().int().nonnegative(),
    /** Fingerprint of the previous page, to detect a server that serves the same page again. */
    previous: z.string().optional(),
  })
  .strict();
export type PageCursor = z.infer<typeof pageCursor>;

export const firstPage: PageCursor = { page: FIRST_PAGE, seen: 0 };

/**
 * The cursor after a page, or undefined when the list is done: an empty page, the running count
 * reaching `totalItems`, or (without `totalItems`) a page shorter than asked for. A short page
 * with `totalItems` not yet reached means the server caps the page size: go on. A page identical
 * to the previous one means the server ignores `page`: stop with an error rather than loop.
 */
export function nextPageCursor(options: {
  cursor: PageCursor;
  ids: readonly string[];
  totalItems: number | undefined;
  pageSize: number;
  what: string;
}): PageCursor | undefined {
  const { cursor, ids, totalItems, pageSize, what } = options;
  if (ids.length === 0) return undefined;
  const fingerprint = pageFingerprint(ids);
  if (fingerprint === cursor.previous) {
    throw new RepeatedPageError(
      `${what}: page ${cursor.page} repeated page ${cursor.page - 1}, so the server ignores the page parameter; ` +
        `stopped instead of looping. Set CONNECTOR_ACCOUNTING_PAGE_SIZE to at least ${totalItems ?? "the number of items"} so that one page holds the whole list`,
    );
  }
  const seen = cursor.seen + ids.length;
  if (totalItems !== undefined ? seen >= totalItems : ids.length < pageSize) return undefined;
  return { page: cursor.page + 1, seen, previous: fingerprint };
}
