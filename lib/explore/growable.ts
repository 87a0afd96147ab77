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

/** Bytes appended in order, kept in blocks (no copy of all when it grows); read whole at the end. */
export class ByteList {
  readonly #blocks: Buffer[] = [];
  #current = Buffer.allocUnsafe(BLOCK);
  #used = 0;
  #length = 0;

  get length(): number {
    return this.#length;
  }

  append(text: string): void {
    const size = Buffer.byteLength(text);
    if (this.#used + size > this.#current.length) {
      this.#blocks.push(this.#current.subarray(0, this.#used));
      this.#current = Buffer.allocUnsafe(Math.max(BLOCK, size));
      this.#used = 0;
    }
    this.#current.write(text, this.#used);
    this.#used += size;
    this.#length += size;
  }

  /** The blocks in order (the last one partly filled): write them out without joining them. */
  blocks(): Buffer[] {
    return [...this.#blocks, this.#current.subarray(0, this.#used)];
  }
}

const BLOCK = 1 << 20;
