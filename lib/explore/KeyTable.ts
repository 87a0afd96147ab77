import { hashId, WORDS } from "../snapshot/HashedIdSet";
import { IntList } from "./growable";

/**
 * Numbers by string key (a resource's `type:id`) in flat arrays, where a `Map` of 1,000,000 keys
 * took over 100 MB: the keys' UTF-8 bytes end to end (key `n` at `starts[n]..starts[n+1]`) and an
 * open-addressing table holding `n + 1` (0: empty) by a hash of the key, at most half full. A
 * lookup compares the key itself, so it is exact whatever the hash does.
 */
export class KeyTable {
  constructor(
    readonly bytes: Buffer,
    readonly starts: Int32Array,
    readonly slots: Int32Array,
  ) {}

  get size(): number {
    return this.starts.length - 1;
  }

  key(n: number): string {
    return this.bytes.toString("utf8", this.starts[n], this.starts[n + 1]);
  }

  get(key: string): number | undefined {
    return find(this.slots, this.bytes, this.starts, key);
  }

  /** Whether key `n` here is key `m` of `other`, compared as bytes (no string made). */
  sameKey(n: number, other: KeyTable, m: number): boolean {
    const from = this.starts[n] as number;
    const to = this.starts[n + 1] as number;
    const otherFrom = other.starts[m] as number;
    const otherTo = other.starts[m + 1] as number;
    return (
      to - from === otherTo - otherFrom &&
      this.bytes.compare(other.bytes, otherFrom, otherTo, from, to) === 0
    );
  }
}

/** Builds a KeyTable one key at a time, numbering keys from 0 in the order added. */
export class KeyTableBuilder {
  #bytes = Buffer.allocUnsafe(1 << 16);
  readonly #starts = new IntList();
  readonly #hashes = new IntList();
  #slots = new Int32Array(1 << 12);

  constructor() {
    this.#starts.push(0);
  }

  get size(): number {
    return this.#hashes.length;
  }

  get(key: string): number | undefined {
    return find(this.#slots, this.#bytes, this.#starts.view(), key);
  }

  /** The new key's number, or undefined when the key was added before. */
  add(key: string): number | undefined {
    const hash = hashOf(key);
    if (find(this.#slots, this.#bytes, this.#starts.view(), key, hash) !== undefined)
      return undefined;
    const n = this.size;
    const size = Buffer.byteLength(key);
    const at = this.#starts.view()[n] as number;
    if (at + size > this.#bytes.length) {
      const next = Buffer.allocUnsafe(Math.max(at + size, Math.ceil(this.#bytes.length * 1.5)));
      this.#bytes.copy(next, 0, 0, at);
      this.#bytes = next;
    }
    this.#bytes.write(key, at);
    this.#starts.push(at + size);
    this.#hashes.push(hash);
    if ((n + 1) * 2 > this.#slots.length) this.#grow();
    else place(this.#slots, n, hash);
    return n;
  }

  /** The table as built (views of the builder's storage; add nothing after). */
  finish(): KeyTable {
    const starts = this.#starts.view();
    const table = new KeyTable(this.#bytes.subarray(0, starts[this.size]), starts, this.#slots);
    // Only a growing table needs the keys' hashes again (the builder's size is theirs: 0 now).
    this.#hashes.drop();
    return table;
  }

  #grow(): void {
    this.#slots = new Int32Array(this.#slots.length * 2);
    const hashes = this.#hashes.view();
    for (let n = 0; n < hashes.length; n++) place(this.#slots, n, hashes[n] as number);
  }
}

function place(slots: Int32Array, n: number, hash: number): void {
  const mask = slots.length - 1;
  let slot = hash & mask;
  while (slots[slot] !== 0) slot = (slot + 1) & mask;
  slots[slot] = n + 1;
}

function find(
  slots: Int32Array,
  bytes: Buffer,
  starts: Int32Array,
  key: string,
  hash = hashOf(key),
): number | undefined {
  const mask = slots.length - 1;
  for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
    const n = (slots[slot] as number) - 1;
    if (n < 0) return undefined;
    if (spells(bytes, starts[n] as number, starts[n + 1] as number, key)) return n;
  }
}

/**
 * Whether `bytes[start..end]` is `key` in UTF-8: compared a character at a time while the key is
 * ASCII (one byte each; no copy of the key for each lookup), as bytes from its first other one.
 */
function spells(bytes: Buffer, start: number, end: number, key: string): boolean {
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c >= 0x80) return Buffer.from(key).equals(bytes.subarray(start, end));
    if (start + i >= end || bytes[start + i] !== c) return false;
  }
  return start + key.length === end;
}

const scratch = new Uint32Array(WORDS);
function hashOf(key: string): number {
  hashId(key, scratch, 0);
  return scratch[1] as number;
}
