import { stat } from "node:fs/promises";
import * as z from "zod";
import { isPrivileged, type PrivilegedEntitlements } from "../connectors";
import { SnapshotInputError } from "../snapshot/errors";
import { hashId, WORDS } from "../snapshot/HashedIdSet";
import { duplicateRecordError, readSnapshotFile } from "../snapshot/readSnapshotFile";
import {
  type BodyLine,
  type EntitlementLine,
  type GrantLine,
  type RecordKind,
  type ResourceLine,
  type ResourceTypeLine,
  type SyncEndLine,
  type SyncStartLine,
  snapshotLine,
} from "../snapshot/records";
import { GrantGraph, resourceKey } from "./GrantGraph";
import { ChunkedBytes, IntList, OffsetList } from "./growable";
import { IndexFileWriter, type SideFile } from "./indexFile";
import { KeyTableBuilder } from "./KeyTable";
import { PIECE, SearchText } from "./SearchText";
import type { IndexKey } from "./snapshotKey";
import { ACCOUNT_SORTS, accountOrders } from "./sortOrders";

/** What the index file's trailer holds besides its regions: small, read whole at start. */
export interface IndexAbout {
  key: IndexKey;
  start: SyncStartLine;
  end: SyncEndLine;
  resourceTypes: ResourceTypeLine[];
  /** Each resource's type by number (`resourceType`); the declared types first. */
  typeIds: string[];
  entitlements: EntitlementLine[];
}

const [syncStart, resourceType, , entitlement, , syncEnd] = snapshotLine.options;

/**
 * `IndexAbout` as a file gives it back: checked before use, since the SHA-256 in a file only says
 * it is whole, not that this build wrote it (one of another shape is rebuilt).
 */
export const indexAbout: z.ZodType<IndexAbout> = z.object({
  key: z.object({ size: z.number(), mtimeMs: z.number(), syncId: z.string(), rules: z.string() }),
  start: syncStart,
  end: syncEnd,
  resourceTypes: z.array(resourceType),
  typeIds: z.array(z.string()),
  entitlements: z.array(entitlement),
});

/** Per resource, bits of `resourceFlags`. */
export const ACCOUNT = 1;
export const DISABLED = 2;
export const HAS_EMAIL = 4;

/**
 * Reads the snapshot once and writes its index file at `path` (the snapshot reader's refusals as
 * `readSnapshotFile` gives them, and a record twice found here, in flat memory): each resource's
 * record as JSON (read back one at a time by number), its key, type, flags and fingerprint; the
 * grants as numbers and their lists; counts; with `search`, each account's folded search text and
 * every sort order (SEARCH_REGIONS: an index without them serves only as the older side of
 * `--diff`). Entitlements and resource types go whole into the trailer (thousands, not millions).
 */
export async function buildIndexFile(
  snapshot: string,
  path: string,
  privilegedFor: (connector: string) => PrivilegedEntitlements,
  { search }: { search: boolean },
): Promise<void> {
  // Taken before reading: a snapshot replaced while it is read gets a new key, so a new index.
  let taken: { size: number; mtimeMs: number };
  try {
    taken = await stat(snapshot);
  } catch (error) {
    throw SnapshotInputError.unreadable(snapshot, error);
  }
  const writer = await IndexFileWriter.create(path);
  try {
    const { size, mtimeMs } = taken;
    await build(snapshot, writer, { size, mtimeMs }, privilegedFor, search);
  } catch (error) {
    await writer.abandon();
    throw error;
  }
}

/**
 * Three passes, each letting go of what the next does not need (the peak is the largest one's,
 * not their sum): the snapshot read and its records and search text written; the grants' lists
 * and counts computed and written; the sort orders computed from the search text read back.
 */
async function build(
  snapshot: string,
  writer: IndexFileWriter,
  taken: { size: number; mtimeMs: number },
  privilegedFor: (connector: string) => PrivilegedEntitlements,
  search: boolean,
) {
  const placed = await readAndPlace(snapshot, writer, taken, privilegedFor, search);
  const { about, accounts, flags, holdingCount, textStarts } = placed;
  if (!search) return writer.finish(about);
  const orders = accountOrders(
    (field) => accountColumn(writer, textStarts, field),
    (p) => ((flags[accounts[p] as number] as number) & DISABLED) !== 0,
    (p) => holdingCount[accounts[p] as number] as number,
  );
  for (const [name, order] of Object.entries(orders)) await writer.array(`order.${name}`, order);
  await writer.finish(about);
}

/** The first two passes; what the third needs is all that is left when it returns. */
async function readAndPlace(
  snapshot: string,
  writer: IndexFileWriter,
  taken: { size: number; mtimeMs: number },
  privilegedFor: (connector: string) => PrivilegedEntitlements,
  search: boolean,
) {
  const { start, end, read } = await readRecords(snapshot, writer, search);
  const rules = privilegedFor(start.connector);
  const kept = await writeGrants(snapshot, writer, read, rules);
  const about: IndexAbout = {
    key: { ...taken, syncId: start.syncId, rules: JSON.stringify(rules) },
    start,
    end,
    resourceTypes: read.resourceTypes,
    typeIds: read.typeIds,
    entitlements: read.entitlements,
  };
  return { about, ...kept };
}

/** Reads the snapshot, writing each resource's record as read and then every account's search text. */
async function readRecords(snapshot: string, writer: IndexFileWriter, search: boolean) {
  const text = search ? await writer.sideFile() : undefined;
  const read = new RecordsRead(writer, text);
  const { start, end } = await readSnapshotFile(snapshot, (line, _, text) =>
    read.visit(line, text),
  );
  await read.records.flush();
  writer.mark("records", 0);
  if (read.repeated)
    throw await duplicateRecordError(snapshot, read.repeated.kind, read.repeated.key);
  await read.accountText?.flush();
  if (text) await writer.array("accountText", text.pieces());
  return { start, end, read };
}

/** Places the grants, computes what each account and entitlement holds, writes every array. */
async function writeGrants(
  snapshot: string,
  writer: IndexFileWriter,
  r: RecordsRead,
  rules: PrivilegedEntitlements,
) {
  // Written and let go first: these are not needed here, and the grants' lists are built next.
  for (const [name, list] of Object.entries(r.writtenAsRead)) {
    await writer.array(name, list.view());
    list.drop();
  }
  const resources = r.keys.finish();
  for (const g of r.pending) {
    const e = r.entitlementAt.get(g.entitlement);
    const p = resources.get(resourceKey(g.principal.type, g.principal.id));
    if (e === undefined || p === undefined) continue;
    r.grantEntitlement.push(e);
    r.grantPrincipal.push(p);
  }
  r.pending = [];
  const graph = new GrantGraph(
    r.grantEntitlement.view(),
    r.grantPrincipal.view(),
    resources.size,
    r.resourceTypes,
    r.entitlements,
    (k) => resources.get(k),
  );
  const twice = repeatedGrant(graph, r.entitlements.length);
  if (twice !== undefined) {
    const [e, p] = twice;
    const id = `${r.entitlements[e]?.id}:${resources.key(p)}`;
    throw await duplicateRecordError(snapshot, "grant", id);
  }
  const privileged = r.entitlements.map((e) => isPrivileged(rules, e));
  const accounts = r.accounts.view();
  const holdingCount = new Int32Array(resources.size);
  const privilegedCount = new Int32Array(resources.size);
  for (const account of accounts)
    graph.eachHolding(account, (grant) => {
      holdingCount[account] = (holdingCount[account] as number) + 1;
      if (privileged[graph.grantEntitlement[grant] as number])
        privilegedCount[account] = (privilegedCount[account] as number) + 1;
    });
  const holderCount = new Int32Array(r.entitlements.length);
  for (let e = 0; e < holderCount.length; e++) holderCount[e] = graph.holders(e).length;
  const flags = Uint8Array.from(r.resourceFlags.view());
  const textStarts = r.accountTextStarts.view();
  const arrays: Record<string, ArrayBufferView> = {
    resourceFlags: flags,
    keyBytes: resources.bytes,
    keyStarts: resources.starts,
    keySlots: resources.slots,
    grantEntitlement: graph.grantEntitlement,
    grantPrincipal: graph.grantPrincipal,
    byPrincipalStart: graph.byPrincipal.start,
    byPrincipalItems: graph.byPrincipal.items,
    byEntitlementStart: graph.byEntitlement.start,
    byEntitlementItems: graph.byEntitlement.items,
    accounts,
    holdingCount,
    privilegedCount,
    holderCount,
  };
  if (r.accountText) arrays.accountTextStarts = textStarts;
  for (const [name, values] of Object.entries(arrays)) await writer.array(name, values);
  return { accounts, flags, holdingCount, textStarts };
}

/**
 * One field (0 name, 1 login, 2 id) of every account's folded search text, read back from the
 * file a piece of whole entries at a time (the text is not held whole).
 */
function accountColumn(writer: IndexFileWriter, starts: Int32Array, field: number): string[] {
  const out: string[] = new Array(starts.length - 1);
  const piece = Buffer.allocUnsafe(PIECE);
  for (let p = 0; p < out.length; ) {
    const base = starts[p] as number;
    let last = p + 1;
    while (last < out.length && (starts[last + 1] as number) - base <= PIECE) last++;
    const text = writer.readBack("accountText", base, (starts[last] as number) - base, piece);
    for (; p < last; p++) {
      let from = (starts[p] as number) - base;
      const end = (starts[p + 1] as number) - base - 1;
      for (let k = 0; k < field; k++) from = text.indexOf(FIELD_BYTE, from) + 1;
      const to = text.indexOf(FIELD_BYTE, from);
      out[p] = text.toString("utf8", from, to === -1 || to > end ? end : to);
    }
  }
  return out;
}

/** The first (entitlement, principal) pair granted twice, if any. */
function repeatedGrant(graph: GrantGraph, entitlements: number): [number, number] | undefined {
  const seenFor = new Int32Array(entitlements);
  for (let p = 0; p + 1 < graph.byPrincipal.start.length; p++)
    for (const grant of graph.byPrincipal.of(p)) {
      const e = graph.grantEntitlement[grant] as number;
      if (seenFor[e] === p + 1) return [e, p];
      seenFor[e] = p + 1;
    }
  return undefined;
}

/** The records as read: resources written out at once, the rest kept as numbers. */
class RecordsRead {
  readonly keys = new KeyTableBuilder();
  readonly resourceTypes: ResourceTypeLine[] = [];
  readonly typeIds: string[] = [];
  readonly #typeAt = new Map<string, number>();
  readonly entitlements: EntitlementLine[] = [];
  readonly entitlementAt = new Map<string, number>();
  readonly recordStarts = new OffsetList();
  readonly resourceType = new IntList();
  readonly resourceFlags = new IntList();
  readonly fingerprints = new IntList();
  readonly grantEntitlement = new IntList();
  readonly grantPrincipal = new IntList();
  /** The lists only written (not used to place the grants). */
  readonly writtenAsRead = {
    recordStarts: this.recordStarts,
    resourceType: this.resourceType,
    fingerprints: this.fingerprints,
  };
  /** Grants read before their entitlement or principal (the writers put those first). */
  pending: GrantLine[] = [];
  readonly accounts = new IntList();
  /** Each resource's record as JSON, into the index file as read. */
  readonly records: ChunkedBytes;
  /** Each account's search text, with `search`: into a side file (copied in after the records). */
  readonly accountText: ChunkedBytes | undefined;
  readonly accountTextStarts = new IntList();
  repeated: { kind: RecordKind; key: string } | undefined;
  readonly #recordPlaced = (length: number) => this.recordStarts.push(length);
  readonly #textPlaced = (length: number) => this.accountTextStarts.push(length);

  constructor(writer: IndexFileWriter, text: SideFile | undefined) {
    this.records = new ChunkedBytes((bytes) => writer.write(bytes));
    this.accountText = text && new ChunkedBytes((bytes) => text.write(bytes));
    this.recordStarts.push(0);
    this.accountTextStarts.push(0);
  }

  /** `text`: the line when it is the record's own JSON (the reader's `Visitor`), kept as read. */
  visit(line: BodyLine, text?: string): Promise<void> | undefined {
    if (line.kind === "grant") {
      const e = this.entitlementAt.get(line.entitlement);
      const p = this.keys.get(resourceKey(line.principal.type, line.principal.id));
      if (e === undefined || p === undefined) this.pending.push(line);
      else {
        this.grantEntitlement.push(e);
        this.grantPrincipal.push(p);
      }
    } else if (line.kind === "resource") return this.#resource(line, text);
    else if (line.kind === "entitlement") {
      if (this.entitlementAt.has(line.id)) this.#twice("entitlement", line.id);
      else {
        this.entitlementAt.set(line.id, this.entitlements.length);
        this.entitlements.push(line);
      }
    } else if (this.resourceTypes.some((t) => t.id === line.id))
      this.#twice("resource_type", line.id);
    else {
      this.resourceTypes.push(line);
      this.#typeOf(line.id);
    }
    return undefined;
  }

  #resource(line: ResourceLine, text?: string): Promise<void> | undefined {
    const key = resourceKey(line.type, line.id);
    const n = this.keys.add(key);
    if (n === undefined) {
      this.#twice("resource", key);
      return undefined;
    }
    this.resourceType.push(this.#typeOf(line.type));
    const emails = line.user?.emails ?? [];
    this.resourceFlags.push(
      (line.user ? ACCOUNT : 0) |
        (line.status === "disabled" ? DISABLED : 0) |
        (emails.length ? HAS_EMAIL : 0),
    );
    const fields = [line.displayName, line.status ?? "", line.user?.login ?? "", emails.join(", ")];
    hashId(fields.join("\u0000"), scratch, 0);
    this.fingerprints.push(scratch[0] as number);
    this.fingerprints.push(scratch[1] as number);
    let searched: Promise<void> | undefined;
    if (line.user) {
      this.accounts.push(n);
      const entry = SearchText.entry([line.displayName, line.user.login, line.id, ...emails]);
      searched = this.accountText?.append(entry, this.#textPlaced);
    }
    const json = `${text ?? JSON.stringify(line)}\n`;
    const record = this.records.append(json, this.#recordPlaced);
    return searched && record
      ? Promise.all([searched, record]).then(() => undefined)
      : (searched ?? record);
  }

  #typeOf(id: string): number {
    let n = this.#typeAt.get(id);
    if (n === undefined) {
      n = this.typeIds.length;
      this.typeIds.push(id);
      this.#typeAt.set(id, n);
    }
    return n;
  }

  #twice(kind: RecordKind, key: string) {
    this.repeated ??= { kind, key };
  }
}

const FIELD_BYTE = 0x01;

/** The regions of an index that only its own page reads (its search and sort orders). */
export const SEARCH_REGIONS = [
  "accountText",
  "accountTextStarts",
  ...ACCOUNT_SORTS.map((sort) => `order.${sort}`),
];
const scratch = new Uint32Array(WORDS);
