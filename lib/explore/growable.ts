type Numbers = Int32Array | Float64Array;

/** A list of numbers in a typed array that grows by half when full: no boxed numbers, no JS array. */
class NumberList<T extends Numbers> {
  #items: T;
  #length = 0;

  constructor(private readonly make: (length: number) => T) {
    this.#items = make(1024);
  }

  get length(): number {
    return this.#length;
  }

  push(value: number): void {
    if (this.#length === this.#items.length) {
      const next = this.make(Math.ceil(this.#items.length * 1.5));
      next.set(this.#items);
      this.#items = next;
    }
    this.#items[this.#length++] = value;
  }

  /** Lets the storage go (push nothing after). */
  drop(): void {
    this.#items = this.make(0);
    this.#length = 0;
  }

  /** The items pushed (a view of the list's storage: valid until the next push). */
  view(): T {
    return this.#items.subarray(0, this.#length) as T;
  }
}

export class IntList extends NumberList<Int32Array> {
  constructor() {
    super((length) => new Int32Array(length));
  }
}

/** For byte offsets, which pass 2^31 in a large file. */
export class OffsetList extends NumberList<Float64Array> {
  constructor() {
    super((length) => new Float64Array(length));
  }
}

/**
 * Text written out as UTF-8 through one chunk (written straight into it, no copy between): a long
 * run of small appends costs one `out` a chunk, and only the chunk is held.
 */
export class ChunkedBytes {
  #chunk = Buffer.allocUnsafe(1 << 20);
  #used = 0;
  /** Bytes appended so far. */
  length = 0;

  /** `out` writes a chunk and is done with it when its promise settles (the chunk is reused). */
  constructor(private readonly out: (bytes: Buffer) => Promise<void>) {}

  /**
   * Appends `text`, then tells `placed` the length so far; a promise when the chunk had to be
   * written out first (awaited before the next append).
   */
  append(text: string, placed?: (length: number) => void): Promise<void> | undefined {
    // A UTF-16 unit is at most 3 bytes of UTF-8: when the text might not fit, write out first.
    const most = text.length * 3;
    if (this.#used + most <= this.#chunk.length) return this.#put(text, placed);
    return this.flush().then(() => {
      if (most > this.#chunk.length) this.#chunk = Buffer.allocUnsafe(most);
      this.#put(text, placed);
    });
  }

  #put(text: string, placed?: (length: number) => void): undefined {
    const bytes = this.#chunk.write(text, this.#used);
    this.#used += bytes;
    this.length += bytes;
    placed?.(this.length);
    return undefined;
  }

  /** Writes out what was appended since the last time. */
  async flush(): Promise<void> {
    if (this.#used > 0) await this.out(this.#chunk.subarray(0, this.#used));
    this.#used = 0;
  }
}
