import { releasableBuffer, release } from "./releasable";

/**
 * A set of string ids that keeps a 128-bit hash of each id instead of the id: four 32-bit words a
 * slot (open addressing, linear probing), so 21 to 32 bytes an id, where a `Set<string>` of ids of
 * 30 characters takes about 100. The slots are split into 16 segments by the top bits of a hash's
 * second word, each grown by half when three quarters full: growing copies one segment, so the
 * old and new slots held at once while it does are a sixteenth of the set's, not all of it (a set
 * of 400,000 grants grew from 7 MB to 11 MB in one step, and peak RSS with it). The snapshot
 * assembler's dedupe and integrity check hold one per kind of record; its grant spool carries the
 * hashes of each grant's entitlement and principal (`hashId`), checked with `hasHash`.
 *
 * Exact in practice: two different ids are taken for one only when their hashes agree on all 127
 * bits kept (the lowest bit of the first word marks a used slot). For n distinct ids that happens
 * with probability below n^2 / 2^128: about 3e-25 for 10^7 ids. The hash is MurmurHash3 x86_128
 * (seed 0) of the id's UTF-16LE bytes: well mixed and fast (about 0.1 microsecond an id here,
 * twenty times less than SHA-256 through node:crypto), but not built to resist ids crafted to
 * collide; the ids held here are assigned by the upstream, not chosen by its users.
 */
export class HashedIdSet {
  readonly #segments: Uint32Array[];
  readonly #sizes: number[];
  #size = 0;

  constructor(initialCapacity = 1024) {
    const slots = Math.max(8, Math.ceil(initialCapacity / SEGMENTS));
    this.#segments = Array.from({ length: SEGMENTS }, () => segmentOfSlots(slots));
    this.#sizes = Array.from({ length: SEGMENTS }, () => 0);
  }

  /** Ids held. */
  get size(): number {
    return this.#size;
  }

  /** Slots allocated (each takes 16 bytes). */
  get capacity(): number {
    return this.#segments.reduce((slots, segment) => slots + segment.length / WORDS, 0);
  }

  /**
   * Gives the set's memory back to the system now (`release`), not when V8 next collects: the
   * assembler's sets of written ids (about 30 MB at 1,000,000 users) are done with before the
   * digest's grants (28 MB) are taken. The set is then empty, with the fewest slots.
   */
  release(): void {
    for (let segment = 0; segment < SEGMENTS; segment++) {
      release(this.#segments[segment] as Uint32Array);
      this.#segments[segment] = segmentOfSlots(8);
    }
    this.#sizes.fill(0);
    this.#size = 0;
  }

  /** Empties the set, keeping its slots: to be filled again to about its size. */
  clear(): void {
    for (const segment of this.#segments) segment.fill(0);
    this.#sizes.fill(0);
    this.#size = 0;
  }

  has(id: string): boolean {
    hashId(id, scratch, 0);
    return this.hasHash(scratch, 0);
  }

  /** Adds `id`; false when it was there already. */
  add(id: string): boolean {
    hashId(id, scratch, 0);
    return this.addHash(scratch, 0);
  }

  /** Whether the set holds the hash written at `at` of `words` (by `hashId`, or a file read back). */
  hasHash(words: Uint32Array, at: number): boolean {
    return find(this.#segments[segmentOf(words, at)] as Uint32Array, words, at) >= 0;
  }

  /** Adds the hash written at `at` of `words`; false when it was there already. */
  addHash(words: Uint32Array, at: number): boolean {
    const segment = segmentOf(words, at);
    let slots = this.#segments[segment] as Uint32Array;
    const found = find(slots, words, at);
    if (found >= 0) return false;
    const size = (this.#sizes[segment] as number) + 1;
    if (size * 4 > (slots.length / WORDS) * 3) {
      slots = grown(slots);
      this.#segments[segment] = slots;
      place(slots, words, at);
    } else {
      copy(words, at, slots, -found - 1);
    }
    this.#sizes[segment] = size;
    this.#size++;
    return true;
  }
}

const SEGMENT_BITS = 4;
const SEGMENTS = 1 << SEGMENT_BITS;

/** A hash's segment: the top bits of its second word. */
function segmentOf(hash: Uint32Array, at: number): number {
  return (hash[at + 1] as number) >>> (32 - SEGMENT_BITS);
}

/**
 * The word offset of the hash's slot in `slots`, or -(offset of the free slot where it belongs) - 1.
 * Its home slot: the rest of its second word scaled to the segment (no modulo, no bias to speak of).
 */
function find(slots: Uint32Array, hash: Uint32Array, from: number): number {
  const end = slots.length;
  const h0 = hash[from] as number;
  const h1 = hash[from + 1] as number;
  const h2 = hash[from + 2] as number;
  const h3 = hash[from + 3] as number;
  let at = Math.floor((((h1 << SEGMENT_BITS) >>> 0) * (end / WORDS)) / 0x1_0000_0000) * WORDS;
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

function place(slots: Uint32Array, hash: Uint32Array, from: number): void {
  copy(hash, from, slots, -find(slots, hash, from) - 1);
}

/** Word by word: a `subarray` a hash made growing a set of 400,000 ids allocate 120 MB. */
function copy(hash: Uint32Array, from: number, slots: Uint32Array, to: number): void {
  slots[to] = hash[from] as number;
  slots[to + 1] = hash[from + 1] as number;
  slots[to + 2] = hash[from + 2] as number;
  slots[to + 3] = hash[from + 3] as number;
}

/** `slots` with half as many again, holding the same hashes; the old ones' memory is given back. */
function grown(slots: Uint32Array): Uint32Array {
  const next = segmentOfSlots(Math.ceil((slots.length / WORDS) * 1.5));
  for (let at = 0; at < slots.length; at += WORDS) {
    if (slots[at] !== 0) place(next, slots, at);
  }
  release(slots);
  return next;
}

/**
 * A segment of `slots` empty slots, in memory `release` gives back at once. V8 checks a resizable
 * buffer's length on each access: about 0.1 microsecond more an add or a lookup, 1 to 2% of a
 * sync's CPU at 1,000,000 users (docs/snapshot-format.md, "Memory").
 */
function segmentOfSlots(slots: number): Uint32Array {
  return new Uint32Array(releasableBuffer(slots * WORDS * 4));
}

/** The 32-bit words of a hash. */
export const WORDS = 4;
const scratch = new Uint32Array(WORDS);

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
