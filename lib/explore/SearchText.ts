import { fold } from "./foldText";

/**
 * The text a search looks in, one entry per account (or entitlement): each entry's fields folded
 * (`fold`) and joined by FIELD, then SEPARATOR, end to end as UTF-8, with each entry's byte offset.
 * It is not held: each search reads it a piece at a time (`read`: from the index file, whose pages
 * the system keeps cached, into one buffer a search reuses) and looks for each word's UTF-8 bytes
 * with `Buffer.indexOf`, a call a hit: at 1,000,000 accounts about 250 ms when every account holds
 * the word, 50 ms for one account, 10 ms for none, and no garbage. Each hit is mapped to its entry
 * by a binary search. UTF-8 finds a word only at a character's start, so a hit is always a hit in
 * the entry's text. Pieces hold whole entries, at most PIECE bytes (or one larger entry).
 *
 * Invariant: `starts` are offsets into the text itself, so a hit at `at` lies in the entry `e`
 * with `starts[e] <= at < starts[e + 1]`; the next `indexOf` begins after `at`, so one word costs
 * at most one scan of the text.
 */
export class SearchText {
  /** The entries each piece begins at, and after the last piece the number of entries. */
  private readonly cuts: number[] = [];

  /** `read(from, to)`: the text's bytes from `from` to `to` (valid until the next read). */
  constructor(
    private readonly read: (from: number, to: number) => Buffer,
    private readonly starts: Int32Array,
  ) {
    for (let entry = 0; entry < this.size; ) {
      this.cuts.push(entry);
      const from = starts[entry] as number;
      let last = entry + 1;
      while (last < this.size && (starts[last + 1] as number) - from <= PIECE) last++;
      entry = last;
    }
    this.cuts.push(this.size);
  }

  /** One entry's text, from its fields as stored. */
  static entry(fields: readonly string[]): string {
    return `${fields.map(fold).join(FIELD)}${SEPARATOR}`;
  }

  static of(entries: readonly (readonly string[])[]): SearchText {
    const texts = entries.map(SearchText.entry);
    const starts = new Int32Array(texts.length + 1);
    texts.forEach((t, i) => {
      starts[i + 1] = (starts[i] as number) + Buffer.byteLength(t);
    });
    const text = Buffer.from(texts.join(""));
    return new SearchText((from, to) => text.subarray(from, to), starts);
  }

  get size(): number {
    return this.starts.length - 1;
  }

  /**
   * Which entries hold every word (words folded, as `searchWords` gives them); all when none. One
   * read of the text: each piece is searched for every word in turn, an entry counting the words
   * it held so far (a piece holds whole entries, so an entry's count is final with its piece).
   */
  matching(words: readonly string[]): Uint8Array | undefined {
    if (words.length === 0) return undefined;
    // Folded text has no control character but the separators, which no folded word holds.
    if (words.some((w) => w === "" || w.includes(SEPARATOR) || w.includes(FIELD)))
      return new Uint8Array(this.size);
    const needles = words.map((word) => Buffer.from(word));
    const held = new Uint16Array(this.size);
    for (let k = 0; k + 1 < this.cuts.length; k++) {
      const from = this.starts[this.cuts[k] as number] as number;
      const text = this.read(from, this.starts[this.cuts[k + 1] as number] as number);
      needles.forEach((needle, w) => {
        for (let at = text.indexOf(needle); at !== -1; ) {
          const entry = this.entryAt(from + at);
          if (held[entry] === w) held[entry] = w + 1;
          // Past this entry, and never at or before `at` (each step moves forward: one scan in all).
          at = text.indexOf(needle, Math.max(at + 1, (this.starts[entry + 1] as number) - from));
        }
      });
    }
    const all = new Uint8Array(this.size);
    for (let e = 0; e < all.length; e++) if (held[e] === words.length) all[e] = 1;
    return all;
  }

  /** The entry whose text holds the offset: the last start at or before it. */
  private entryAt(offset: number): number {
    let low = 0;
    let high = this.starts.length - 2;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((this.starts[mid] as number) <= offset) low = mid;
      else high = mid - 1;
    }
    return low;
  }
}

/** Bytes in a piece at most (the buffer a search reads the text into). */
export const PIECE = 2 ** 22;
const SEPARATOR = "\u0000";
const FIELD = "\u0001";
