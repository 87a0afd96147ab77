import type * as z from "zod";
import { parseResponse } from "../../http";
import { type ElementVisitor, readJsonObject } from "../../json/largeJson";
import type { SnapshotRecord } from "../../snapshot";
import type { RecordSink } from "../../sync";
import { listResponse } from "./models";

/** A list page as the sync uses it: its items' ids and records, in order, and its `totalItems`. */
export interface RecordsPage {
  ids: string[];
  /** The records not yet handed to the job's sink. */
  records: SnapshotRecord[];
  totalItems: number | undefined;
}

/** A successful JSON answer's bytes, kept to be read by `PagedItems` once the request is done. */
export class ListBody {
  constructor(readonly bytes: Buffer) {}
}

/**
 * A list page read from its bytes by `PagedItems`, checked as `BlacklineApi.listPage` checks a
 * page: the body's other members by `listResponse` (failing as `what`), then the first item that
 * does not fit (failing as `${where}, item N`). Undefined where `PagedItems` does not read the
 * bytes: nothing was then handed to `sink`, or the bytes are not JSON.
 */
export function readRecordsPage<Item extends z.ZodType<{ id: string }>>(
  bytes: Buffer,
  item: Item,
  toRecords: (item: z.output<Item>) => SnapshotRecord[],
  names: { where: string; what: string },
  sink?: RecordSink,
): RecordsPage | undefined {
  const read = new PagedItems(item, toRecords, sink);
  const envelope = readJsonObject(bytes, read);
  if (!envelope) return undefined;
  const body = parseResponse(listResponse, { body: envelope }, names.what);
  if (read.failure) {
    const { index } = read.failure;
    parseResponse(item, { body: read.failure.item }, `${names.where}, item ${index + 1}`);
  }
  return { ids: read.ids, records: read.records, totalItems: body.totalItems };
}

/**
 * A list page's body read item by item (`readJsonObject`): each item is parsed by `item` and made
 * into records as its run of the body is parsed, so neither the page's JSON nor its parsed items
 * are held whole. With a sink, the records go to it every `SINK_RECORDS` too, so they are not
 * held either: a page of 1,000 users read whole was held while all of it was parsed, checked,
 * mapped and written, long enough to outlive V8's young generation (at 100,000 users, about 60 MB
 * of the 115 MB promoted to the old generation in a sync, and a sixth of its full collections).
 *
 * It checks as the page read whole is checked (`readRecordsPage`): the first item that
 * does not fit is kept with its index (`failure`), to be reported once the body's other members
 * are checked; the items after it are not mapped. Records handed to the sink before it are of a
 * page that then fails, and so the sync (`RecordSink`).
 */
class PagedItems<Item extends z.ZodType<{ id: string }>> implements ElementVisitor {
  readonly key = "items";
  readonly ids: string[] = [];
  records: SnapshotRecord[] = [];
  failure: { item: unknown; index: number } | undefined;
  readonly #item: Item;
  readonly #toRecords: (item: z.output<Item>) => SnapshotRecord[];
  readonly #sink: RecordSink | undefined;

  constructor(
    item: Item,
    toRecords: (item: z.output<Item>) => SnapshotRecord[],
    sink: RecordSink | undefined,
  ) {
    this.#item = item;
    this.#toRecords = toRecords;
    this.#sink = sink;
  }

  visit(element: unknown, index: number): void {
    if (this.failure) return;
    const parsed = this.#item.safeParse(element);
    if (!parsed.success) {
      this.failure = { item: element, index };
      return;
    }
    this.ids.push(parsed.data.id);
    const records = this.#toRecords(parsed.data);
    for (let i = 0; i < records.length; i++) this.records.push(records[i] as SnapshotRecord);
    if (this.#sink && this.records.length >= SINK_RECORDS) {
      this.#sink.write(this.records);
      this.records = [];
    }
  }
}

/** Records handed to the sink at once: about 100 users, 60 KB of JSON. */
const SINK_RECORDS = 256;
