import { isUser, userKey } from "../snapshot/records";
import { HashList, ID_HASH_WORDS, idHashWords, type SnapshotDigest } from "./SnapshotDigest";

/**
 * The fields of a snapshot record the digest reads: the writer's records (lib/snapshot/records) and
 * the lines a reader parses (lib/snapshot/records) both have them.
 */
export type DigestedRecord =
  | { kind: "resource"; type: string; id: string; user?: unknown }
  | { kind: "grant"; id: string }
  | { kind: "resource_type" | "entitlement" | "sync_start" | "sync_end" };

/** Where a record's hash goes: a `HashList`, or a `RemovalCounter`'s count of one kind. */
export interface HashSink {
  /** Takes the hash whose words (`idHashWords`) are at `at` of `words`. */
  pushWords(words: Uint32Array, at: number): void;
}

/**
 * The one rule for what a digest holds: a user (a resource with the user trait) by the hash of
 * `userKey(type, id)` into `users`, a grant by the hash of its id into `grants`; no other record.
 */
export function hashDigestedRecord(
  record: DigestedRecord,
  users: HashSink,
  grants: HashSink,
  scratch: Uint32Array,
): void {
  if (record.kind === "resource") {
    if (isUser(record)) {
      idHashWords(userKey(record.type, record.id), scratch, 0);
      users.pushWords(scratch, 0);
    }
  } else if (record.kind === "grant") {
    idHashWords(record.id, scratch, 0);
    grants.pushWords(scratch, 0);
  }
}

/**
 * Builds a snapshot's digest from its records, the one rule for what it holds, whoever calls it:
 * each user (a resource with the user trait) by the hash of `userKey(type, id)`, each grant by the
 * hash of its id; no other record counts. `digestSnapshotLines` adds every line it reads back; the
 * snapshot assembler adds every record as it writes it, so a sync hands the guard the digest of
 * the file it wrote without reading it again. A writer that decides on a grant later (the
 * assembler spools grants until it knows which are kept) hashes it with `grantHash` and adds the
 * hash with `addGrantHash` once the grant is written.
 *
 * Memory: 8 bytes a user and a grant added (two `HashList`s), nothing else.
 */
export class SnapshotDigestBuilder {
  readonly #users = new HashList();
  readonly #grants = new HashList();
  readonly #scratch = new Uint32Array(ID_HASH_WORDS);

  /** Adds a record of the snapshot: a user or a grant counts, any other record is passed over. */
  add(record: DigestedRecord): void {
    hashDigestedRecord(record, this.#users, this.#grants, this.#scratch);
  }

  /** Writes a grant's hash (`ID_HASH_WORDS` words) at `at` of `out`, for `addGrantHash`. */
  grantHash(grant: { id: string }, out: Uint32Array, at: number): void {
    idHashWords(grant.id, out, at);
  }

  /** Adds a grant by the hash `grantHash` wrote at `at` of `words`. */
  addGrantHash(words: Uint32Array, at: number): void {
    this.#grants.pushWords(words, at);
  }

  /**
   * Room for `count` more grants at once, for a writer that knows how many may come: the list
   * then does not grow by doubling (each step a new array, the old one freed only when V8 collects).
   */
  expectGrants(count: number): void {
    this.#grants.reserve(count);
  }

  /** The digest of the records added; the builder is done. */
  finish(start: { syncId: string; connector: string }): SnapshotDigest {
    return {
      syncId: start.syncId,
      connector: start.connector,
      users: this.#users.finish(),
      grants: this.#grants.finish(),
    };
  }
}
