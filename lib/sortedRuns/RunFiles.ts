import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Writable } from "node:stream";
import { registerTempFile, unregisterTempFile } from "../snapshot/tempFiles";
import { type SyncFile, writeFailure } from "../sync/errors";

/**
 * Who owns a set of temporary files, as their names and a write failure say it: `diff`, or the
 * duplicate check of the snapshot reader (`export`, `explore`).
 */
export interface RunOwner {
  /** In the files' names: `access-connectors-{slug}-{pid}-…`. */
  slug: string;
  /** In a write failure: `cannot write {what} {path}: …`. */
  what: string;
  /** In a write failure: `…, so {outcome}.` */
  outcome: string;
}

const DIFF_FILES: RunOwner = {
  slug: "diff",
  what: "a temporary file of diff",
  outcome: "the diff stopped and its temporary files are removed",
};

/**
 * The temporary files of one command's sort: sorted runs and the like (JSON Lines), named after
 * this process in the system's temporary directory and registered (lib/snapshot/tempFiles), so a
 * signal removes them as well as `removeAll`.
 */
export class RunFiles {
  readonly #prefix: string;
  readonly #owner: RunOwner;
  readonly #paths = new Set<string>();
  #count = 0;

  constructor(dir = tmpdir(), owner: RunOwner = DIFF_FILES) {
    this.#owner = owner;
    this.#prefix = join(
      dir,
      `access-connectors-${owner.slug}-${process.pid}-${randomUUID().slice(0, 8)}`,
    );
  }

  /** A fresh path for a temporary file, registered for removal. */
  path(tag: string): string {
    const path = `${this.#prefix}-${tag}-${++this.#count}.jsonl`;
    this.#paths.add(path);
    registerTempFile(path);
    return path;
  }

  async remove(path: string): Promise<void> {
    await rm(path, { force: true });
    this.#paths.delete(path);
    unregisterTempFile(path);
  }

  /** Never throws: a file that cannot be removed must not hide the failure that ended the work. */
  async removeAll(): Promise<void> {
    await Promise.all([...this.#paths].map((path) => this.remove(path).catch(() => {})));
  }

  /**
   * `error` of writing the temporary file `path` through `out`: a failure of the file itself (a
   * full disk) is a `WriteFailedError` naming it and the fix (exit 1); any other error stays as it
   * is.
   */
  writeFailure(error: unknown, path: string, out: Writable): unknown {
    if (!out.errored) return error;
    const { what, outcome } = this.#owner;
    const file: SyncFile = {
      what,
      path,
      elsewhere: "set TMPDIR to a directory on a filesystem with room",
      outcome,
    };
    return writeFailure(out.errored, file);
  }
}
