import { fold } from "./foldText";

/**
 * The text a search looks in, one entry per account: each entry's fields folded (`fold`) and
 * joined by FIELD, the entries held as one string with SEPARATOR after each, and each entry's
 * start in that string. A word is found with `indexOf` over the whole (fast even at 100,000
 * accounts), and each hit mapped to its entry by a binary search.
 *
 * Invariant: `starts` are offsets into `text` itself (taken from the folded entries' lengths), so
 * a hit at offset `at` lies in the entry `e` with `starts[e] <= at < starts[e + 1]`; the next
 * `indexOf` begins after `at`, so one word costs at most one scan of the text.
 */
export class SearchText {
  private readonly text: string;
  private readonly starts: Int32Array;

  /** `entries`: each entry's fields, as stored (folded here). */
  constructor(entries: readonly (readonly string[])[]) {
    const folded = entries.map((fields) => fields.map(fold).join(FIELD));
    this.starts = new Int32Array(folded.length + 1);
    let at = 0;
    folded.forEach((entry, i) => {
      this.starts[i] = at;
      at += entry.length + SEPARATOR.length;
    });
    this.starts[folded.length] = at;
    // One join (a flat string: a concatenation would leave it to the first search to flatten).
    this.text = [...folded, ""].join(SEPARATOR);
  }

  get size(): number {
    return this.starts.length - 1;
  }

  /** Which entries hold every word (words folded, as `searchWords` gives them); all when none. */
  matching(words: readonly string[]): Uint8Array | undefined {
    if (words.length === 0) return undefined;
    let mask: Uint8Array | undefined;
    for (const word of words) {
      const hits = this.holding(word);
      if (mask)
        for (let i = 0; i < mask.length; i++) mask[i] = (mask[i] as number) & (hits[i] as number);
      else mask = hits;
    }
    return mask;
  }

  private holding(word: string): Uint8Array {
    const hits = new Uint8Array(this.size);
    // Folded text has no control character but the separators, which no folded word holds.
    if (word === "" || word.includes(SEPARATOR) || word.includes(FIELD)) return hits;
    for (let at = this.text.indexOf(word); at !== -1; ) {
      const entry = this.entryAt(at);
      hits[entry] = 1;
      // Past this entry, and never at or before `at` (each step moves forward: one scan in all).
      at = this.text.indexOf(word, Math.max(at + 1, this.starts[entry + 1] as number));
    }
    return hits;
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

const SEPARATOR = "\u0000";
const FIELD = "\u0001";
