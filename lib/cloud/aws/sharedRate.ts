import type { SharedRate } from "../../http";
import { type Logger, silentLogger } from "../../logging";
import type { RateSettings } from "../../rate";
import { SlotBook } from "./slotBook";

/**
 * The instance's request rate, shared by every worker of its runs: lib/rate's model, its state
 * in the runs table (docs/rate-control.md, "The cloud runtime"; `rateItems.ts`). Three items:
 * `clock`, start slots on a schedule at the model's pace, which a worker claims a block of with
 * one atomic conditional update; `inbox`, the 429s told, appended unconditionally; and `model`, the
 * model's state, read with the other two and written (conditionally on its version) only at a
 * fold: on a 429, or every second as slots are started, which rewrites the clock's schedule.
 * Each process's side of it is a `SlotBook` (`slotBook.ts`). `requestsPerSecond` 0 (no ceiling,
 * no pace) shares nothing. Each fold that moves the model logs `learned rate moved` at debug, as
 * the command line's limiter does.
 */
export function sharedRate(
  table: string,
  connectorId: string,
  requestsPerSecond: number | undefined,
  logger: Logger = silentLogger,
): SharedRate | undefined {
  if (requestsPerSecond === 0) return undefined;
  const settings: RateSettings = { requestsPerSecond };
  // Keyed by the setting too: a changed ceiling starts a model of its own.
  const pk = `rate#${connectorId}#${requestsPerSecond ?? "learned"}`;
  const key = `${table}|${pk}`;
  let book = books.get(key);
  if (!book) {
    book = new SlotBook(table, pk, settings, logger);
    books.set(key, book);
  }
  return book;
}

/** One book per instance in this process, kept while the function is warm. */
const books = new Map<string, SlotBook>();
