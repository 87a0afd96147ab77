/** Where `diff` prints: the CLI's stdout (a stream, or a test's collector). */
export interface TextTarget {
  write(text: string): unknown;
}

const FLUSH_AT = 64 * 1024;

/**
 * Text for a target, gathered into chunks of 64 KiB; a stream whose buffer is full is waited for
 * (`drain`), so printing 500,000 changes to a slow pipe holds one chunk, not all of them.
 */
export class ChunkedOutput {
  readonly #target: TextTarget;
  #pending = "";

  /** The reader went away (`diff ... | head`): the rest is not printed, as diff(1) stops. */
  #closed = false;
  #error: Error | undefined;

  constructor(target: TextTarget) {
    this.#target = target;
    const stream = target as Partial<NodeJS.EventEmitter>;
    stream.on?.("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EPIPE" || error.code === "ERR_STREAM_DESTROYED") this.#closed = true;
      else this.#error ??= error;
    });
  }

  async write(text: string): Promise<void> {
    this.#pending += text;
    if (this.#pending.length >= FLUSH_AT) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.#error) throw this.#error;
    const text = this.#pending;
    this.#pending = "";
    if (text.length === 0 || this.#closed) return;
    const accepted = this.#target.write(text);
    const target = this.#target as Partial<NodeJS.EventEmitter>;
    if (accepted === false && typeof target.once === "function") {
      // Either the buffer drains, or the stream fails (the listener above decides what that means).
      await new Promise<void>((done) => {
        const settle = () => {
          target.off?.("drain", settle);
          target.off?.("error", settle);
          done();
        };
        target.once?.("drain", settle);
        target.once?.("error", settle);
      });
      if (this.#error) throw this.#error;
    }
  }
}
