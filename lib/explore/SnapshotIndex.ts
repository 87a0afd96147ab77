import { isPrivileged, type PrivilegedEntitlements } from "../connectors";
import { ConnectorError, UsageError } from "../errors";
import type {
  EntitlementLine,
  ResourceLine,
  ResourceTypeLine,
  SyncEndLine,
  SyncStartLine,
} from "../snapshot/records";
import { buildApart, canBuildApart } from "./buildApart";
import {
  ACCOUNT,
  buildIndexFile,
  DISABLED,
  HAS_EMAIL,
  type IndexAbout,
  indexAbout,
  SEARCH_REGIONS,
} from "./buildIndex";
import { Adjacency, GrantGraph, type Holder, type Holding } from "./GrantGraph";
import { type IndexFile, readIndexFile } from "./indexFile";
import { KeyTable } from "./KeyTable";
import { PIECE, SearchText } from "./SearchText";
import { type IndexKey, snapshotKey } from "./snapshotKey";
import { ACCOUNT_SORTS, type AccountSort } from "./sortOrders";

export { resourceKey } from "./GrantGraph";
export type { Holder, Holding };

/** An index file checked whole and of the snapshot as it is now, not yet read (`load`). */
export interface PreparedIndex {
  file: IndexFile;
  /** Built by an earlier start (not by this one). */
  reused: boolean;
}

/** Where a snapshot's index is kept: beside it (derived data; delete it to rebuild). */
export const indexPathOf = (snapshot: string) => `${snapshot}.explore-index`;

/**
 * A snapshot's index for the review page, kept in a file beside the snapshot (`indexPathOf`),
 * built on the first start and reused while the snapshot's size, modification time and sync id
 * (and the connector's privileged rules) are unchanged. In memory: typed arrays (grants as pairs
 * of numbers and their lists, counts, flags, sort orders, the resources' keys); entitlements and
 * resource types as records (thousands). Each resource's record stays in the file, read by number
 * when a page shows it, and so do the accounts' search text (read through at each search) and the
 * fingerprints (read once, by the changes view), so memory grows by about 150 bytes a resource.
 */
export class SnapshotIndex {
  readonly start: SyncStartLine;
  readonly end: SyncEndLine;
  readonly resourceTypes: ResourceTypeLine[];
  readonly entitlements: EntitlementLine[];
  readonly entitlementAt = new Map<string, number>();
  /** Resource numbers of the accounts (resources with the user trait's fields), in file order. */
  readonly accounts: Int32Array;
  readonly graph: GrantGraph;
  readonly grantEntitlement: Int32Array;
  readonly grantPrincipal: Int32Array;
  readonly byPrincipal: Adjacency;
  readonly privileged: Uint8Array;
  /** Per resource: entitlements held, directly or through a team. */
  readonly holdingCount: Int32Array;
  readonly privilegedCount: Int32Array;
  /** Per entitlement: accounts (and teams) holding it. */
  readonly holderCount: Int32Array;
  /** Per entitlement: display name, id and the id of the resource it is on. */
  readonly entitlementText: SearchText;
  readonly #search: { text: SearchText; orders: Record<AccountSort, Int32Array> } | undefined;
  readonly #keys: KeyTable;
  readonly #typeIds: string[];
  readonly #resourceType: Int32Array;
  readonly #flags: Uint8Array;
  readonly #recordStarts: Float64Array;

  private constructor(
    private readonly file: IndexFile,
    privilegedFor: (connector: string) => PrivilegedEntitlements,
    /** Read from a file an earlier start built (not built by this one). */
    readonly reused: boolean,
    search: boolean,
  ) {
    const about = file.about as IndexAbout;
    const int32 = (name: string) => {
      const bytes = file.region(name);
      return new Int32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    };
    this.start = about.start;
    this.end = about.end;
    this.resourceTypes = about.resourceTypes;
    this.entitlements = about.entitlements;
    this.entitlements.forEach((e, i) => {
      this.entitlementAt.set(e.id, i);
    });
    this.#typeIds = about.typeIds;
    this.#keys = new KeyTable(file.region("keyBytes"), int32("keyStarts"), int32("keySlots"));
    this.#resourceType = int32("resourceType");
    this.#flags = file.region("resourceFlags");
    const starts = file.region("recordStarts");
    this.#recordStarts = new Float64Array(starts.buffer, starts.byteOffset, starts.byteLength / 8);
    this.accounts = int32("accounts");
    this.graph = new GrantGraph(
      int32("grantEntitlement"),
      int32("grantPrincipal"),
      this.#keys.size,
      this.resourceTypes,
      this.entitlements,
      (key) => this.#keys.get(key),
      {
        byPrincipal: new Adjacency(int32("byPrincipalStart"), int32("byPrincipalItems")),
        // Read at its first use: an older snapshot's (the changes view's) is needed only when a
        // page lists an entitlement's former holders, and it is 4 bytes a grant.
        byEntitlement: () =>
          new Adjacency(int32("byEntitlementStart"), int32("byEntitlementItems")),
      },
    );
    this.grantEntitlement = this.graph.grantEntitlement;
    this.grantPrincipal = this.graph.grantPrincipal;
    this.byPrincipal = this.graph.byPrincipal;
    const rules = privilegedFor(this.start.connector);
    this.privileged = Uint8Array.from(this.entitlements, (e) => (isPrivileged(rules, e) ? 1 : 0));
    this.holdingCount = int32("holdingCount");
    this.privilegedCount = int32("privilegedCount");
    this.holderCount = int32("holderCount");
    this.entitlementText = SearchText.of(
      this.entitlements.map((e) => [e.displayName, e.id, e.resource.id]),
    );
    if (!search) return;
    const piece = Buffer.allocUnsafeSlow(PIECE);
    this.#search = {
      text: new SearchText(
        (from, to) => file.read("accountText", from, to - from, piece),
        int32("accountTextStarts"),
      ),
      orders: Object.fromEntries(
        ACCOUNT_SORTS.map((sort) => [sort, int32(`order.${sort}`)]),
      ) as Record<AccountSort, Int32Array>,
    };
  }

  /**
   * The snapshot's index, ready to read: the file beside it when that was built from this
   * snapshot as it is now (and holds the search when `search` is asked for), else built anew (a
   * UsageError when the snapshot is not a complete one, or the index cannot be written); with
   * `apart`, in a worker thread (`buildApart`), stopped when `apart` aborts. Nothing of it is in
   * memory yet (`load`).
   */
  static async prepare(
    snapshot: string,
    privilegedFor: (connector: string) => PrivilegedEntitlements,
    { search, apart }: { search: boolean; apart?: AbortSignal },
  ): Promise<PreparedIndex> {
    const path = indexPathOf(snapshot);
    const key = await snapshotKey(snapshot, privilegedFor);
    const kept = key && usable(readIndexFile(path, { verify: true }), search, key);
    if (kept) return { file: kept, reused: true };
    try {
      if (apart && canBuildApart()) await buildApart({ snapshot, path, search }, apart);
      else await buildIndexFile(snapshot, path, privilegedFor, { search });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (ConnectorError.is(error) || typeof code !== "string") throw error;
      throw new UsageError(
        `cannot write the review page's index ${path} (${code}): explore keeps it beside the snapshot; copy the snapshot to a directory you can write`,
      );
    }
    // Just written whole (its hash computed as it was written): not read through again.
    const built = usable(readIndexFile(path, { verify: false }), search);
    if (!built) throw new Error(`the index just written to ${path} does not read back whole`);
    return { file: built, reused: false };
  }

  /**
   * A prepared index read into memory. Without `search` (an older snapshot, which only the
   * changes view reads), its accounts' search text and sort orders stay in the file.
   */
  static load(
    { file, reused }: PreparedIndex,
    privilegedFor: (connector: string) => PrivilegedEntitlements,
    { search }: { search: boolean },
  ): SnapshotIndex {
    return new SnapshotIndex(file, privilegedFor, reused, search);
  }

  /** `prepare` then `load` with its search. */
  static async open(
    snapshot: string,
    privilegedFor: (connector: string) => PrivilegedEntitlements,
  ): Promise<SnapshotIndex> {
    const prepared = await SnapshotIndex.prepare(snapshot, privilegedFor, { search: true });
    return SnapshotIndex.load(prepared, privilegedFor, { search: true });
  }

  /** Per account (by its place in `accounts`): display name, login, id and emails. */
  get searchText(): SearchText {
    return this.#searched().text;
  }

  /** The accounts (positions in `accounts`) by each sortable column. */
  get accountOrders(): Record<AccountSort, Int32Array> {
    return this.#searched().orders;
  }

  #searched() {
    if (!this.#search) throw new Error("this index was loaded without its search (an older one)");
    return this.#search;
  }

  get resourceCount(): number {
    return this.#keys.size;
  }

  /** A resource's record, read from the index file. */
  resource(n: number): ResourceLine {
    const from = this.#recordStarts[n];
    const to = this.#recordStarts[n + 1];
    if (from === undefined || to === undefined) throw new Error(`no resource ${n}`);
    return JSON.parse(this.file.read("records", from, to - from).toString()) as ResourceLine;
  }

  /** A resource's number by its key (`type:id`). */
  resourceNamed(key: string): number | undefined {
    return this.#keys.get(key);
  }

  /** A resource's key, `type:id`. */
  keyOf(n: number): string {
    return this.#keys.key(n);
  }

  typeOf(n: number): string {
    return this.#typeIds[this.#resourceType[n] as number] as string;
  }

  isAccount(n: number): boolean {
    return ((this.#flags[n] as number) & ACCOUNT) !== 0;
  }

  isDisabled(n: number): boolean {
    return ((this.#flags[n] as number) & DISABLED) !== 0;
  }

  hasEmail(n: number): boolean {
    return ((this.#flags[n] as number) & HAS_EMAIL) !== 0;
  }

  /**
   * Per resource, two words: a 64-bit fingerprint of its name, status, login and emails (two
   * different sets agree by chance once in 2^63). Read from the file at each call, not kept: only
   * the changes view compares them, once.
   */
  fingerprints(): Uint32Array {
    const bytes = this.file.region("fingerprints");
    return new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  }

  /** Whether resource `n` here and `m` in `other` have the same key, compared as bytes. */
  sameKey(n: number, other: SnapshotIndex, m: number): boolean {
    return this.#keys.sameKey(n, other.#keys, m);
  }

  get grantCount(): number {
    return this.grantEntitlement.length;
  }

  /** A grant's id (docs/snapshot-format.md: `{entitlementId}:{principalType}:{principalId}`). */
  grantId(grant: number): string {
    const e = this.entitlements[this.grantEntitlement[grant] as number] as EntitlementLine;
    return `${e.id}:${this.keyOf(this.grantPrincipal[grant] as number)}`;
  }

  /** Finds a grant by its id: an entitlement's id, then its principal's `type:id`. */
  grantNamed(id: string): number | undefined {
    for (let at = id.indexOf(":"); at !== -1; at = id.indexOf(":", at + 1)) {
      const e = this.entitlementAt.get(id.slice(0, at));
      const principal = e === undefined ? undefined : this.resourceNamed(id.slice(at + 1));
      if (principal === undefined) continue;
      for (const grant of this.byPrincipal.of(principal))
        if (this.grantEntitlement[grant] === e) return grant;
    }
    return undefined;
  }

  holdings(resource: number): Holding[] {
    return this.graph.holdings(resource);
  }

  holders(entitlement: number): Holder[] {
    return this.graph.holders(entitlement);
  }

  resourceTypeName(type: string): string {
    return this.resourceTypes.find((t) => t.id === type)?.displayName ?? type;
  }

  get byEntitlement(): Adjacency {
    return this.graph.byEntitlement;
  }

  /** Lets the index file go (its records and search text can no longer be read). */
  close(): void {
    this.file.close();
  }
}

/** Every region a load reads: one without search leaves out SEARCH_REGIONS. */
const BASE_REGIONS = [
  "recordStarts",
  "resourceType",
  "resourceFlags",
  "fingerprints",
  "keyBytes",
  "keyStarts",
  "keySlots",
  "grantEntitlement",
  "grantPrincipal",
  "byPrincipalStart",
  "byPrincipalItems",
  "byEntitlementStart",
  "byEntitlementItems",
  "accounts",
  "holdingCount",
  "privilegedCount",
  "holderCount",
];

/**
 * The file when it holds an index this build reads (its trailer's facts, and every region a load
 * with or without `search` reads, the resources' agreeing in length) and, given `key`, of the
 * snapshot as it is now; else undefined (closed), and the caller rebuilds it.
 */
function usable(
  file: IndexFile | undefined,
  search: boolean,
  key?: IndexKey,
): IndexFile | undefined {
  if (!file) return undefined;
  // Checked, then used as read (the parse would reorder the records' fields).
  const about = file.about as IndexAbout;
  const resources = (file.size("keyStarts") ?? 0) / 4 - 1;
  const whole =
    indexAbout.safeParse(about).success &&
    (!key || JSON.stringify(about.key) === JSON.stringify(key)) &&
    (search ? [...BASE_REGIONS, ...SEARCH_REGIONS] : BASE_REGIONS).every(
      (name) => file.size(name) !== undefined,
    ) &&
    file.size("recordStarts") === (resources + 1) * 8 &&
    file.size("resourceFlags") === resources;
  if (whole) return file;
  file.close();
  return undefined;
}
