import type { SyncEntry } from "./statusReport";

export type { SyncEntry };

/** The last syncs, newest first; at most `limit` are kept. */
export class SyncHistory {
  readonly #limit: number;
  readonly #entries: SyncEntry[] = [];

  constructor(limit: number) {
    this.#limit = limit;
  }

  add(entry: SyncEntry): void {
    this.#entries.unshift(entry);
    this.#entries.length = Math.min(this.#entries.length, this.#limit);
  }

  get entries(): readonly SyncEntry[] {
    return this.#entries;
  }
}
