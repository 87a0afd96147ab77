/** A small seeded PRNG (mulberry32): the same seed gives the same tenant on every machine. */
export class SeededRandom {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  /** A random version-4-shaped UUID. */
  uuid(): string {
    const hex = Array.from({ length: 32 }, () => this.int(16).toString(16)).join("");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
  }
}

/** Names with non-ASCII characters on purpose: the snapshot must carry them unchanged. */
export const GIVEN_NAMES = [
  "Ada",
  "José",
  "Zoë",
  "Łukasz",
  "Søren",
  "Ægir",
  "Chloé",
  "Ingrid",
  "Mateo",
  "Aiko",
  "Björn",
  "Renée",
  "Nuño",
  "Dvořák",
  "Yusuf",
  "Grace",
  "Olúwaseun",
  "Siobhán",
  "Hana",
  "Émile",
];
export const FAMILY_NAMES = [
  "Lovelace",
  "Müller",
  "Çelik",
  "O'Brien",
  "García",
  "Nakamura",
  "Kowalski",
  "Østergaard",
  "Łęcki",
  "Hopper",
  "山田",
  "Nguyễn",
  "Ferreira",
  "Schrödinger",
  "Åberg",
  "Turing",
  "Śliwa",
];

/** An ASCII login part: accents dropped, anything else removed. */
export function asciiSlug(text: string): string {
  const slug = text
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "");
  return slug || "user";
}
