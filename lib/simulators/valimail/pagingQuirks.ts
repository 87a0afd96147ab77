/**
 * How a SCIM server pages a list (RFC 7644 section 3.4.2.4), and the ways real servers depart from
 * it: one set of settings shared by the Valimail simulator and the scimmy peer of the tests, so a
 * quirk means the same thing against code of this project and code nobody here wrote. With none
 * set, a list honours `startIndex` (from 1) and `count` (up to 1000), and answers `totalResults`
 * and the true `itemsPerPage`.
 */
export interface ScimPagingQuirks {
  /** Honour `startIndex` and `count`; off, every list answers all users (an unpaginated server). */
  paging?: boolean;
  /** Honour `count` but serve from the first user whatever `startIndex` asks for. */
  ignoreStartIndex?: boolean;
  /** Read `startIndex` as a 0-based offset: `startIndex=1` starts at the second user. */
  zeroBasedStartIndex?: boolean;
  /** Largest `count` served: a larger one is cut to it, silently. Default 1000. */
  maxCount?: number;
  /** Serve pages of this many users whatever `count` asks for (still cut to `maxCount`). */
  fixedCount?: number;
  /** Leave `totalResults` out of list answers (RFC 7644 requires it; servers omit it). */
  omitTotal?: boolean;
  /**
   * What `itemsPerPage` says: `served` (default) the number of users in the answer, as RFC 7644
   * defines it; `asked` the `count` the request asked for, whatever was served.
   */
  itemsPerPage?: "served" | "asked";
}

const DEFAULT_MAX_COUNT = 1000;

/** The users a list request gets, as a 0-based `offset` into the list and a `size`. */
export interface ScimWindow {
  offset: number;
  size: number;
}

/** Which users of a list of `total` a request with these query parameters is served. */
export function scimWindow(
  quirks: ScimPagingQuirks,
  query: URLSearchParams,
  total: number,
): ScimWindow {
  if (quirks.paging === false) return { offset: 0, size: total };
  const startIndex = Number(query.get("startIndex") ?? 1);
  const offset = quirks.ignoreStartIndex
    ? 0
    : quirks.zeroBasedStartIndex
      ? Math.max(0, startIndex)
      : Math.max(1, startIndex) - 1;
  const count = quirks.fixedCount ?? Number(query.get("count") ?? total);
  return { offset, size: Math.min(Math.max(0, count), quirks.maxCount ?? DEFAULT_MAX_COUNT) };
}

/** The paging fields of a list answer that serves `served` users of `total`. */
export function scimListFields(
  quirks: ScimPagingQuirks,
  query: URLSearchParams,
  served: number,
  total: number,
): { totalResults?: number; itemsPerPage: number } {
  const asked = query.get("count");
  const itemsPerPage = quirks.itemsPerPage === "asked" && asked !== null ? Number(asked) : served;
  return { ...(quirks.omitTotal ? {} : { totalResults: total }), itemsPerPage };
}
