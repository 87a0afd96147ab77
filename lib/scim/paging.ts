import { z } from "zod";
import { pageFingerprint } from "../sync";
import { FIRST_INDEX } from "./constants";
import { ScimPagingError } from "./errors";

/**
 * Index paging of a SCIM list (`startIndex`, `count`). The cursor carries the next index, the
 * running count and a fingerprint of the last page, so a server that ignores paging is detected
 * from the cursor alone.
 */
export const listCursor = z
  .object({
    startIndex: z.number().int().min(FIRST_INDEX),
    seen: z.number().int().nonnegative(),
    previous: z.string().optional(),
  })
  .strict();
export type ListCursor = z.infer<typeof listCursor>;

export const firstListCursor: ListCursor = { startIndex: FIRST_INDEX, seen: 0 };

/**
 * The cursor after a page, or undefined when the list is done: no resources, the running count
 * reaching `totalResults`, or the page repeating the previous one (a server that ignores
 * `startIndex`). A repeat before `totalResults` is reached means the list cannot be read whole:
 * that fails rather than passing a partial list off as complete.
 */
export function nextListCursor(options: {
  cursor: ListCursor;
  ids: readonly string[];
  totalResults: number | undefined;
  what: string;
}): ListCursor | undefined {
  const { cursor, ids, totalResults, what } = options;
  if (ids.length === 0) return undefined;
  const fingerprint = pageFingerprint(ids);
  if (fingerprint === cursor.previous) {
    if (totalResults !== undefined && cursor.seen < totalResults) {
      throw new ScimPagingError(
        `${what}: the page at startIndex ${cursor.startIndex} repeated the previous one after ${cursor.seen} of ${totalResults} resources; the server ignores startIndex, so the list cannot be read whole`,
      );
    }
    return undefined;
  }
  const seen = cursor.seen + ids.length;
  if (totalResults !== undefined && seen >= totalResults) return undefined;
  return { startIndex: cursor.startIndex + ids.length, seen, previous: fingerprint };
}
