import type { Removal } from "./judgeRemoval";
import { HashList, HIGH, ID_HASH_WORDS, LOW, type SnapshotDigest, wordsOf } from "./SnapshotDigest";
import { type DigestedRecord, type HashSink, hashDigestedRecord } from "./SnapshotDigestBuilder";

/**
 * Counts what a new snapshot removes from a previous one while the previous one is read, record by
 * record, without building its digest: exactly `judgeRemoval`'s counts. Each of the previous
 * snapshot's hashes is looked up in the new digest (sorted): found, it marks the new hash shared (a
 * bit a hash of the new digest, so a hash found twice is shared once); not found, it is kept, and
 * the removed are those kept, deduplicated. The previous snapshot's ids are `shared + removed`, as
 * its deduplicated digest would hold them. Memory: a bit a hash of the new digest, and 8 bytes a
 * removed id; a previous digest built in full was 8 bytes an id, grown by doubling (at
 * 1,000,000 users and 3,500,000 grants, up to 56 MB while it grew). When the previous hashes come
 * from a digest file (`distinct`: each once, as `HashList.finish` wrote them), a miss is only
 * counted: a mass deletion, the case the guard is for, then keeps no list of what it removes.
 */
export class RemovalCounter {
  readonly #users: KindCounter;
  readonly #grants: KindCounter;
  readonly #scratch = new Uint32Array(ID_HASH_WORDS);

  constructor(next: SnapshotDigest, previous: { distinct?: boolean } = {}) {
    this.#users = new KindCounter(next.users, previous.distinct === true);
    this.#grants = new KindCounter(next.grants, previous.distinct === true);
  }

  /** Adds a record of the previous snapshot, by the digest's rule (`hashDigestedRecord`). */
  add(record: DigestedRecord): void {
    hashDigestedRecord(record, this.#users, this.#grants, this.#scratch);
  }

  /** Adds a user of the previous snapshot by its hash's words (low, then high) at `at`. */
  userWords(words: Uint32Array, at: number): void {
    this.#users.pushWords(words, at);
  }

  /** Adds a grant of the previous snapshot by its hash's words (low, then high) at `at`. */
  grantWords(words: Uint32Array, at: number): void {
    this.#grants.pushWords(words, at);
  }

  /** The previous snapshot's users and grants, and how many of each the new one lacks. */
  finish(): { users: Removal; grants: Removal } {
    return { users: this.#users.finish(), grants: this.#grants.finish() };
  }
}

/**
 * One kind's count: the new digest's hashes as words, a bit a hash shared, the misses (kept to be
 * deduplicated, or only counted when the previous hashes are `distinct`).
 */
class KindCounter implements HashSink {
  readonly #words: Uint32Array;
  readonly #length: number;
  readonly #shared: Uint8Array;
  readonly #removed: HashList | undefined;
  #misses = 0;

  constructor(next: BigUint64Array, distinct: boolean) {
    this.#words = wordsOf(next);
    this.#length = next.length;
    this.#shared = new Uint8Array(Math.ceil(next.length / 8));
    this.#removed = distinct ? undefined : new HashList();
  }

  pushWords(words: Uint32Array, at: number): void {
    const found = this.#find(words[at + 1] as number, words[at] as number);
    if (found >= 0)
      this.#shared[found >>> 3] = (this.#shared[found >>> 3] as number) | (1 << (found & 7));
    else if (this.#removed) this.#removed.pushWords(words, at);
    else this.#misses++;
  }

  finish(): Removal {
    let shared = 0;
    for (const byte of this.#shared) shared += BITS_SET[byte] as number;
    const removed = this.#removed ? this.#removed.finish().length : this.#misses;
    return { previous: shared + removed, removed };
  }

  /** The hash's index in the new digest, or -1: a binary search on its words (no bigint a read). */
  #find(high: number, low: number): number {
    let from = 0;
    let to = this.#length;
    while (from < to) {
      const middle = (from + to) >>> 1;
      const h = this.#words[2 * middle + HIGH] as number;
      const l = this.#words[2 * middle + LOW] as number;
      if (h === high && l === low) return middle;
      if (h < high || (h === high && l < low)) from = middle + 1;
      else to = middle;
    }
    return -1;
  }
}

/** The bits set in each byte value. */
const BITS_SET = Uint8Array.from({ length: 256 }, (_, byte) => {
  let bits = 0;
  for (let b = byte; b > 0; b >>= 1) bits += b & 1;
  return bits;
});
