/**
 * Seeded faults: whether a request gets a fault is a function of the seed, the request (method
 * and URL) and its attempt number, nothing else. Which requests fail, and how often each fails,
 * does not depend on how concurrent requests interleave, on timing or on the runtime that sends
 * them, so a run with a given seed gives the same answer every time.
 */
import { createHash } from "node:crypto";

/** What a scheduled fault does to one answer. */
export type ScheduledFault =
  /** 429, with `Retry-After` in seconds when given. */
  | { kind: "status429"; retryAfterSeconds?: number }
  /** 502, 503 and 504 in turn by attempt. */
  | { kind: "status5xx" }
  /** The connection is closed before any answer. */
  | { kind: "drop" }
  /** The answer comes after `delayMs` (beyond the client's timeout). */
  | { kind: "slow"; delayMs: number }
  /** The headers announce the whole body; half of it is sent, then the connection is closed. */
  | { kind: "cutBody" }
  /** A complete answer (status 200, length as sent) whose JSON stops halfway. */
  | { kind: "truncatedJson" }
  /** A 200 JSON answer of `bytes` bytes (more than the client's response size cap). */
  | { kind: "oversize"; bytes: number }
  /**
   * A list answer that breaks the schema: its first item without `id`, its first item's `id` a
   * boolean, or the list itself `null`. Answers without a list are served unchanged.
   */
  | { kind: "schema"; breaks: "missing_id" | "wrong_type" | "null_list" };

export interface FaultSchedule {
  seed: number;
  /** The share of requests (0 to 1) that are hit, chosen from the seed and the request. */
  share: number;
  /** A hit request gets the fault on its first `attempts` attempts, then is served. */
  attempts: number;
  /** Only requests whose `METHOD /path?query` matches can be hit. */
  match?: RegExp;
  fault: ScheduledFault;
}

/** A number in [0, 1) from the seed and the text: the same on every machine and every run. */
export function seededUnit(seed: number, text: string): number {
  return createHash("sha256").update(`${seed}\n${text}`).digest().readUInt32BE(0) / 2 ** 32;
}

/** The fault for attempt `attempt` (from 1) of `request` (`METHOD /path?query`), if any. */
export function scheduledFault(
  schedule: FaultSchedule,
  request: string,
  attempt: number,
): ScheduledFault | undefined {
  if (attempt > schedule.attempts) return undefined;
  if (schedule.match && !schedule.match.test(request)) return undefined;
  return seededUnit(schedule.seed, request) < schedule.share ? schedule.fault : undefined;
}

/**
 * How a list's pages go wrong: `duplicates` repeats the previous page's last item at the start of
 * every later page (each page then has one more item than asked, and none is missing);
 * `alternate` serves pages 1, 2, 1, 2, ... from the third page on, for a list of more than two
 * pages (a list that never ends).
 */
export type PagingFault = "duplicates" | "alternate";

/**
 * The items of the page that starts at `start` (0-based) with `size` items, under `fault`;
 * `onFault` is called when the fault changed the page.
 */
export function faultyPage<T>(
  items: readonly T[],
  start: number,
  size: number,
  fault: PagingFault | undefined,
  onFault: () => void = () => {},
): T[] {
  if (fault === "duplicates" && start > 0 && start <= items.length) {
    onFault();
    return items.slice(start - 1, start + size);
  }
  if (fault === "alternate" && items.length > 2 * size && start >= 2 * size) {
    onFault();
    const first = (Math.floor(start / size) % 2) * size;
    return items.slice(first, first + size);
  }
  return items.slice(start, start + size);
}

/**
 * The data changing while it is read: once the users list's first page (of more than one item)
 * has been answered, a user is added at the front of the list or one of that page's users is
 * removed (one without team memberships, so that no other list changes), as when someone edits
 * users in the middle of a sync.
 */
export type DataChange = "add_user" | "remove_user";

/** A body of exactly `bytes` bytes of JSON (an object with one long string), in chunks. */
export function* oversizeBody(bytes: number, chunkBytes = 64 * 1024): Generator<string> {
  const head = '{"padding":"';
  const tail = '"}';
  let left = Math.max(0, bytes - head.length - tail.length);
  yield head;
  while (left > 0) {
    const n = Math.min(left, chunkBytes);
    yield "x".repeat(n);
    left -= n;
  }
  yield tail;
}

/** The answer's body with its list broken as `breaks` says; undefined when it has no list. */
export function breakSchema(
  body: unknown,
  breaks: "missing_id" | "wrong_type" | "null_list",
): unknown {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  // The list of resources: the first array of objects (not SCIM's array of schema names).
  const entry = Object.entries(body).find(
    ([, value]) => Array.isArray(value) && typeof value[0] === "object" && value[0] !== null,
  );
  if (!entry) return undefined;
  const [key, list] = entry as [string, unknown[]];
  if (breaks === "null_list") return { ...body, [key]: null };
  const [first, ...rest] = list;
  if (typeof first !== "object" || first === null) return undefined;
  const { id: _id, ...withoutId } = first as Record<string, unknown>;
  const broken = breaks === "missing_id" ? withoutId : { ...withoutId, id: true };
  return { ...body, [key]: [broken, ...rest] };
}
