import { once } from "node:events";

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

  constructor(target: TextTarget) {
    this.#target = target;
  }

  async write(text: string): Promise<void> {
    this.#pending += text;
    if (this.#pending.length >= FLUSH_AT) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.#pending.length === 0) return;
    const text = this.#pending;
    this.#pending = "";
    const accepted = this.#target.write(text);
    const target = this.#target as Partial<NodeJS.EventEmitter>;
    if (accepted === false && typeof target.once === "function") {
      await once(target as NodeJS.EventEmitter, "drain");
    }
  }
}
