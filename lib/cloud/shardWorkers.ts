import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { PreparedPage } from "../snapshot/preparedPage";

/** A shard sent to a worker: its chunks as read. */
export interface ShardRequest {
  id: number;
  chunks: readonly (Uint8Array | string)[];
}

/** A worker's answer: the shard made ready, or its error as data (an error loses its class). */
export type ShardAnswer = { id: number; page: PreparedPage } | { id: number; failed: ShardFailure };

interface ShardFailure {
  name: string;
  message: string;
}

/** The workers' script in finalize's package (scripts/package-functions.mjs), beside the handler. */
export const SHARD_WORKER = new URL("./shard-worker.mjs", import.meta.url);

/**
 * How many shard workers finalize starts: one a vCPU but the main thread's, and none on one vCPU
 * (a worker there only takes turns with the main thread); none where the script is not there
 * (run from the sources), so the shards are then made ready on the main thread.
 */
export function shardWorkerCount(
  script: URL = SHARD_WORKER,
  vcpus: number = availableParallelism(),
): number {
  return vcpus > 1 && existsSync(fileURLToPath(script)) ? vcpus - 1 : 0;
}

/**
 * Worker threads that make shards ready to write (`preparePage`: lines split, parsed where not in
 * the writer's form, serialised, hashed), beside the main thread, which then only keeps the
 * first of each identity in the run's order (docs/cloud.md, "Beyond 1,000,000 users"). Shards go
 * to the workers in turn; `prepare`'s answers come back as promises, each failing with the
 * shard's error in its class (`SyntaxError` for a line that is no JSON).
 */
export class ShardWorkers {
  readonly #workers: Worker[];
  readonly #waiting = new Map<
    number,
    { resolve: (page: PreparedPage) => void; reject: (error: Error) => void }
  >();
  #next = 0;
  #ended: Error | undefined;

  constructor(count: number, script: URL = SHARD_WORKER) {
    this.#workers = Array.from({ length: count }, () => {
      const worker = new Worker(script);
      worker.on("message", (answer: ShardAnswer) => this.#answered(answer));
      worker.on("error", (error) => this.#fail(error));
      worker.on("exit", (code) => this.#fail(new Error(`a shard worker ended (exit ${code})`)));
      return worker;
    });
  }

  /** Makes a shard ready in the next worker. */
  prepare(chunks: readonly (Buffer | string)[]): Promise<PreparedPage> {
    if (this.#ended) return Promise.reject(this.#ended);
    const id = this.#next++;
    const worker = this.#workers[id % this.#workers.length] as Worker;
    // One buffer of its own: a chunk that is a view of a larger one would be copied whole.
    const bytes = chunks.some((chunk) => typeof chunk === "string")
      ? chunks
      : [Buffer.concat(chunks as Buffer[])];
    // Sent before it waits (its answer comes on a later turn): a send that throws leaves no
    // promise waiting that `close` would reject unheard.
    worker.postMessage({ id, chunks: bytes } satisfies ShardRequest);
    return new Promise<PreparedPage>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
    });
  }

  /** Ends the workers; shards still waiting fail. */
  async close(): Promise<void> {
    this.#fail(new Error("the shard workers were closed"));
    await Promise.all(this.#workers.map((worker) => worker.terminate()));
  }

  #answered(answer: ShardAnswer): void {
    const waiting = this.#waiting.get(answer.id);
    if (!waiting) return;
    this.#waiting.delete(answer.id);
    if ("failed" in answer) waiting.reject(errorOf(answer.failed));
    else waiting.resolve(answer.page);
  }

  #fail(error: Error): void {
    this.#ended ??= error;
    for (const { reject } of this.#waiting.values()) reject(this.#ended);
    this.#waiting.clear();
  }
}

/** A shard's error as a worker sends it. */
export function failureOf(error: unknown): ShardFailure {
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: "Error", message: String(error) };
}

const CLASSES: Record<string, new (message: string) => Error> = {
  SyntaxError,
  TypeError,
  RangeError,
};

function errorOf(failure: ShardFailure): Error {
  const Class = CLASSES[failure.name] ?? Error;
  return new Class(failure.message);
}
