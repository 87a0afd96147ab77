/**
 * A set of string ids that keeps a 128-bit hash of each id instead of the id: four 32-bit words a
 * slot in one typed array (open addressing, linear probing, grown by half when three quarters
 * full), so 21 to 32 bytes an id, where a `Set<string>` of ids of 30 characters takes about 100.
 * The snapshot assembler's dedupe and integrity check hold one per kind of record; its grant spool
 * carries the hashes of each grant's entitlement and principal (`hashId`), checked with `hasHash`.
 *
 * Exact in practice: two different ids are taken for one only when their hashes agree on all 127
 * bits kept (the lowest bit of the first word marks a used slot). For n distinct ids that happens
 * with probability below n^2 / 2^128: about 3e-25 for 10^7 ids. The hash is MurmurHash3 x86_128
 * (seed 0) of the id's UTF-16LE bytes: well mixed and fast (about 0.1 microsecond an id here,
 * twenty times less than SHA-256 through node:crypto), but not built to resist ids crafted to
 * collide; the ids held here are assigned by the upstream, not chosen by its users.
 */
export class HashedIdSet {
  #slots: Uint32Array;
  #capacity: number;
  #size = 0;

  constructor(initialCapacity = 1024) {
    this.#capacity = Math.max(8, Math.ceil(initialCapacity));
    this.#slots = new Uint32Array(this.#capacity * WORDS);
  }

  /** Ids held. */
  get size(): number {
    return this.#size;
  }

  /** Slots allocated (each takes 16 bytes). */
  get capacity(): number {
    return this.#capacity;
  }

  has(id: string): boolean {
    hashId(id, scratch, 0);
    return this.#find(scratch, 0) >= 0;
  }

  /** Adds `id`; false when it was there already. */
  add(id: string): boolean {
    hashId(id, scratch, 0);
    return this.addHash(scratch, 0);
  }

  /** Whether the set holds the hash written at `at` of `words` (by `hashId`, or a file read back). */
  hasHash(words: Uint32Array, at: number): boolean {
    return this.#find(words, at) >= 0;
  }

  /** Adds the hash written at `at` of `words`; false when it was there already. */
  addHash(words: Uint32Array, at: number): boolean {
    const found = this.#find(words, at);
    if (found >= 0) return false;
    if ((this.#size + 1) * 4 > this.#capacity * 3) {
      this.#grow();
      this.#place(words, at);
    } else {
      this.#copy(words, at, -found - 1);
    }
    this.#size++;
    return true;
  }

  /** The word offset of the hash's slot, or -(offset of the free slot where it belongs) - 1. */
  #find(hash: Uint32Array, from: number): number {
    const slots = this.#slots;
    const end = this.#capacity * WORDS;
    const h0 = hash[from] as number;
    const h1 = hash[from + 1] as number;
    const h2 = hash[from + 2] as number;
    const h3 = hash[from + 3] as number;
    let at = home(h1, this.#capacity) * WORDS;
    for (;;) {
      const w0 = slots[at] as number;
      if (w0 === 0) return -at - 1;
      if (w0 === h0 && slots[at + 1] === h1 && slots[at + 2] === h2 && slots[at + 3] === h3) {
        return at;
      }
      at += WORDS;
      if (at === end) at = 0;
    }
  }

  #place(hash: Uint32Array, from: number): void {
    this.#copy(hash, from, -this.#find(hash, from) - 1);
  }

  /** Word by word: a `subarray` a hash made growing a set of 400,000 ids allocate 120 MB. */
  #copy(hash: Uint32Array, from: number, to: number): void {
    const slots = this.#slots;
    slots[to] = hash[from] as number;
    slots[to + 1] = hash[from + 1] as number;
    slots[to + 2] = hash[from + 2] as number;
    slots[to + 3] = hash[from + 3] as number;
  }

  #grow(): void {
    const old = this.#slots;
    this.#capacity = Math.ceil(this.#capacity * 1.5);
    this.#slots = new Uint32Array(this.#capacity * WORDS);
    for (let at = 0; at < old.length; at += WORDS) {
      if (old[at] !== 0) this.#place(old, at);
    }
  }
}

/** The 32-bit words of a hash. */
export const WORDS = 4;
const scratch = new Uint32Array(WORDS);

/** The home slot of a hash: its second word scaled to the capacity (no modulo, no bias to speak of). */
function home(word: number, capacity: number): number {
  return Math.floor((word * capacity) / 0x1_0000_0000);
}

const C1 = 0x239b961b;
const C2 = 0xab0e9789;
const C3 = 0x38b34ae5;
const C4 = 0xa1e38b93;

const rotl = (x: number, r: number) => (x << r) | (x >>> (32 - r));

function fmix(h: number): number {
  let x = h;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x;
}

const mix1 = (k: number) => Math.imul(rotl(Math.imul(k, C1), 15), C2);
const mix2 = (k: number) => Math.imul(rotl(Math.imul(k, C2), 16), C3);
const mix3 = (k: number) => Math.imul(rotl(Math.imul(k, C3), 17), C4);
const mix4 = (k: number) => Math.imul(rotl(Math.imul(k, C4), 18), C1);

/**
 * MurmurHash3 x86_128 with seed 0 (Austin Appleby's reference, smhasher) of the UTF-16LE bytes of
 * `id`, two code units a 32-bit word, into `out` from word `at` (`WORDS` words); the lowest bit of
 * the first word is then set, so a used slot is never all zero.
 */
export function hashId(id: string, out: Uint32Array, at: number): void {
  const length = id.length;
  let h1 = 0;
  let h2 = 0;
  let h3 = 0;
  let h4 = 0;
  const blockEnd = length - (length & 7);
  let i = 0;
  for (; i < blockEnd; i += 8) {
    h1 ^= mix1(id.charCodeAt(i) | (id.charCodeAt(i + 1) << 16));
    h1 = (Math.imul(rotl(h1, 19) + h2, 5) + 0x561ccd1b) | 0;
    h2 ^= mix2(id.charCodeAt(i + 2) | (id.charCodeAt(i + 3) << 16));
    h2 = (Math.imul(rotl(h2, 17) + h3, 5) + 0x0bcaa747) | 0;
    h3 ^= mix3(id.charCodeAt(i + 4) | (id.charCodeAt(i + 5) << 16));
    h3 = (Math.imul(rotl(h3, 15) + h4, 5) + 0x96cd1c35) | 0;
    h4 ^= mix4(id.charCodeAt(i + 6) | (id.charCodeAt(i + 7) << 16));
    h4 = (Math.imul(rotl(h4, 13) + h1, 5) + 0x32ac3b17) | 0;
  }
  // The tail: 0 to 7 code units, 0 to 14 bytes; a missing code unit is 0. Not read past the end
  // (that would take the optimised code off its fast path), and no closure (one a call was 170 MB
  // of garbage in a sync of 100,000 users).
  const tail = length - i;
  if (tail > 6) h4 ^= mix4(id.charCodeAt(i + 6));
  if (tail > 4) h3 ^= mix3(id.charCodeAt(i + 4) | (tail > 5 ? id.charCodeAt(i + 5) << 16 : 0));
  if (tail > 2) h2 ^= mix2(id.charCodeAt(i + 2) | (tail > 3 ? id.charCodeAt(i + 3) << 16 : 0));
  if (tail > 0) h1 ^= mix1(id.charCodeAt(i) | (tail > 1 ? id.charCodeAt(i + 1) << 16 : 0));

  const bytes = length * 2;
  h1 ^= bytes;
  h2 ^= bytes;
  h3 ^= bytes;
  h4 ^= bytes;
  h1 = (h1 + h2 + h3 + h4) | 0;
  h2 = (h2 + h1) | 0;
  h3 = (h3 + h1) | 0;
  h4 = (h4 + h1) | 0;
  h1 = fmix(h1);
  h2 = fmix(h2);
  h3 = fmix(h3);
  h4 = fmix(h4);
  h1 = (h1 + h2 + h3 + h4) | 0;
  h2 = (h2 + h1) | 0;
  h3 = (h3 + h1) | 0;
  h4 = (h4 + h1) | 0;
  out[at] = h1 | 1;
  out[at + 1] = h2;
  out[at + 2] = h3;
  out[at + 3] = h4;
}
