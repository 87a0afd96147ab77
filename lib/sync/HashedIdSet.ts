/**
 * A set of string ids that keeps a 128-bit hash of each id instead of the id: four 32-bit words a
 * slot in one typed array (open addressing, linear probing, grown by half when three quarters
 * full), so 21 to 32 bytes an id, where a `Set<string>` of ids of 30 characters takes about 100.
 * The snapshot assembler's dedupe and integrity check hold one per kind of record.
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
    hashId(id, scratch);
    return this.#find(scratch) >= 0;
  }

  /** Whether the set holds the hash that `hashHex` wrote at `offset` of `text` (32 hex digits). */
  hasHex(text: string, offset: number): boolean {
    for (let word = 0; word < WORDS; word++) {
      const at = offset + word * 8;
      scratch[word] = Number.parseInt(text.slice(at, at + 8), 16);
    }
    return this.#find(scratch) >= 0;
  }

  /** Adds `id`; false when it was there already. */
  add(id: string): boolean {
    hashId(id, scratch);
    const found = this.#find(scratch);
    if (found >= 0) return false;
    if ((this.#size + 1) * 4 > this.#capacity * 3) {
      this.#grow();
      this.#place(scratch);
    } else {
      this.#slots.set(scratch, -found - 1);
    }
    this.#size++;
    return true;
  }

  /** The word offset of the hash's slot, or -(offset of the free slot where it belongs) - 1. */
  #find(hash: Uint32Array): number {
    const slots = this.#slots;
    const end = this.#capacity * WORDS;
    const h0 = hash[0] as number;
    const h1 = hash[1] as number;
    const h2 = hash[2] as number;
    const h3 = hash[3] as number;
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

  #place(hash: Uint32Array): void {
    this.#slots.set(hash, -this.#find(hash) - 1);
  }

  #grow(): void {
    const old = this.#slots;
    this.#capacity = Math.ceil(this.#capacity * 1.5);
    this.#slots = new Uint32Array(this.#capacity * WORDS);
    for (let at = 0; at < old.length; at += WORDS) {
      if (old[at] !== 0) this.#place(old.subarray(at, at + WORDS));
    }
  }
}

const WORDS = 4;
const scratch = new Uint32Array(WORDS);

/** The home slot of a hash: its second word scaled to the capacity (no modulo, no bias to speak of). */
function home(word: number, capacity: number): number {
  return Math.floor((word * capacity) / 0x1_0000_0000);
}

/**
 * The hash `HashedIdSet` keeps for `id`, as 32 hex digits: a file can carry it beside a record, so
 * that reading the file back checks membership without parsing the record (`hasHex`).
 */
export function hashHex(id: string): string {
  hashId(id, scratch);
  let hex = "";
  for (const word of scratch) hex += word.toString(16).padStart(8, "0");
  return hex;
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
 * `id`, two code units a 32-bit word, into `out`; the lowest bit of `out[0]` is then set, so a
 * used slot is never all zero.
 */
export function hashId(id: string, out: Uint32Array): void {
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
  // The tail: 0 to 7 code units, 0 to 14 bytes; a missing code unit reads as 0.
  const tail = length - i;
  const unit = (k: number) => (k < tail ? id.charCodeAt(i + k) : 0);
  if (tail > 6) h4 ^= mix4(unit(6));
  if (tail > 4) h3 ^= mix3(unit(4) | (unit(5) << 16));
  if (tail > 2) h2 ^= mix2(unit(2) | (unit(3) << 16));
  if (tail > 0) h1 ^= mix1(unit(0) | (unit(1) << 16));

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
  out[0] = h1 | 1;
  out[1] = h2;
  out[2] = h3;
  out[3] = h4;
}
