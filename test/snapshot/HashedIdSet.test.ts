import { describe, expect, it } from "vitest";
import { HashedIdSet, hashId, WORDS } from "../../lib/snapshot/HashedIdSet";

/**
 * MurmurHash3 x86_128, seed 0, of each id's UTF-16LE bytes, as words h1..h4, computed by the
 * reference C implementation through Python's mmh3 5.3.0:
 * `mmh3.hash128(s.encode("utf-16-le"), 0, x64arch=False, signed=False)`, split low word first.
 * Lengths cover every tail (0 to 7 code units) and more than one block.
 */
const REFERENCE: [string, [number, number, number, number]][] = [
  ["", [0, 0, 0, 0]],
  ["a", [54243734, 3438235617, 3438235617, 3438235617]],
  ["ab", [638564691, 2938287869, 2938287869, 2938287869]],
  ["abcdefg", [2233458270, 4162493099, 708124466, 4203646119]],
  ["abcdefgh", [1815443029, 2381879457, 2808947469, 1108635924]],
  ["abcdefghi", [396613426, 938402950, 80977633, 4001328604]],
  ["user\u00001000", [2199918761, 1788997096, 1505631724, 3819259435]],
  ["team:500:member:user:1000", [242104370, 4010937029, 343477178, 2183609717]],
  ["Zürich 東京 😀", [1634080445, 3370377544, 3834094410, 902138462]],
  ["x".repeat(37), [1068430955, 3007344502, 1960289054, 3528963295]],
];

describe("hashId", () => {
  it("is MurmurHash3 x86_128 of the UTF-16LE bytes, with the used-slot bit set", () => {
    const out = new Uint32Array(4);
    for (const [id, [h1, h2, h3, h4]] of REFERENCE) {
      hashId(id, out, 0);
      expect([...out], JSON.stringify(id)).toEqual([(h1 | 1) >>> 0, h2, h3, h4]);
    }
  });
});

describe("HashedIdSet", () => {
  it("answers exactly as a Set of the ids would, duplicates and absent ids included", () => {
    const set = new HashedIdSet();
    const reference = new Set<string>();
    const disagreements: string[] = [];
    // Ids as the assembler keys them, each drawn about twice, in a scrambled order.
    for (let n = 0; n < 200_000; n++) {
      const k = (n * 7919) % 100_003;
      const id = k % 3 === 0 ? `user\u0000${k}` : `team:${k % 997}:member:user:${k}`;
      const isNew = !reference.has(id);
      reference.add(id);
      if (set.add(id) !== isNew) disagreements.push(`add ${id}`);
    }
    for (const id of reference) if (!set.has(id)) disagreements.push(`has ${id}`);
    for (let k = 100_003; k < 150_000; k++) {
      for (const id of [`user\u0000${k}`, `team:${k % 997}:member:user:${k}`]) {
        if (set.has(id)) disagreements.push(`absent ${id}`);
      }
    }
    expect(disagreements).toEqual([]);
    expect(set.size).toBe(reference.size);
  });

  it("finds a hash written at any offset of an array, and only the ids it holds", () => {
    const set = new HashedIdSet();
    const held = ["team:7:member", "user\u00001000", "東京"];
    for (const id of held) set.add(id);
    const ids = [...held, "team:8:member", "user\u00001001", ""];
    // After an odd word, as a file read back holds hashes among other words.
    const words = new Uint32Array(1 + ids.length * WORDS);
    for (const [n, id] of ids.entries()) hashId(id, words, 1 + n * WORDS);
    for (const [n, id] of ids.entries()) {
      expect(set.hasHash(words, 1 + n * WORDS), JSON.stringify(id)).toBe(held.includes(id));
    }
  });

  it("tells apart ids that differ only in length, case, a NUL or a non-Latin character", () => {
    const ids = ["a", "a\u0000", "A", "", "\u0000", "東京", "東亰", "😀", "\ud83d", "user\u00001"];
    const set = new HashedIdSet(8);
    for (const id of ids) expect(set.add(id)).toBe(true);
    for (const id of ids) expect(set.add(id)).toBe(false);
    expect(set.size).toBe(ids.length);
  });

  it("grows one segment at a time, by half when three quarters full, and finds every id after each growth", () => {
    const set = new HashedIdSet(8);
    const capacities = [set.capacity];
    const missing: string[] = [];
    let overfull = 0;
    for (let n = 0; n < 5_000; n++) {
      set.add(`id-${n}`);
      if (set.capacity !== capacities.at(-1)) {
        capacities.push(set.capacity);
        for (let k = 0; k <= n; k++) if (!set.has(`id-${k}`)) missing.push(`id-${k}`);
      }
      if (set.size * 4 > set.capacity * 3) overfull++;
    }
    expect(missing).toEqual([]);
    expect(overfull).toBe(0);
    // 16 segments of 8 slots; a growth takes one of them from 8 slots to 12, and so on: each step
    // adds a small share of the slots, never half of them at once.
    expect(capacities.slice(0, 3)).toEqual([128, 132, 136]);
    const steps = capacities.slice(1).map((capacity, n) => capacity / (capacities[n] as number));
    expect(Math.max(...steps)).toBeLessThan(1.1);
    expect(set.size).toBe(5_000);
    expect(set.has("id-5000")).toBe(false);
  });

  it("gives its memory back on release, and is then an empty set that works", () => {
    const set = new HashedIdSet(8);
    for (let n = 0; n < 5_000; n++) set.add(`id-${n}`);
    expect(set.capacity).toBeGreaterThan(5_000);
    set.release();
    expect(set.size).toBe(0);
    expect(set.capacity).toBe(128);
    expect(set.has("id-1")).toBe(false);
    expect(set.add("id-1")).toBe(true);
    expect(set.add("id-1")).toBe(false);
    expect(set.has("id-1")).toBe(true);
  });

  it("holds a million ids of one shape without a collision, in under 40 bytes each", () => {
    const set = new HashedIdSet();
    let refused = 0;
    for (let user = 0; user < 500_000; user++) {
      if (!set.add(`team:${user % 2000}:member:user:${user}`)) refused++;
      if (!set.add(`user\u0000${user}`)) refused++;
    }
    expect(refused).toBe(0);
    expect(set.size).toBe(1_000_000);
    expect((set.capacity * 16) / set.size).toBeLessThan(40);
  });
});
