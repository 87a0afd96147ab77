import { tmpdir } from "node:os";
import { RunFiles, type RunOwner } from "../sortedRuns/RunFiles";
import {
  escapeLine,
  type Keyed,
  MAX_FAN_IN,
  mergeRuns,
  RepeatedKey,
  RUN_RECORDS,
  type RunCodec,
  type RunEntry,
  unescapeLine,
  writeRun,
} from "../sortedRuns/runs";
import { type BodyLine, type RecordKind, recordIdentity } from "./records";

const KEY_FILES: RunOwner = {
  slug: "keys",
  what: "a temporary file of the duplicate check",
  outcome: "the snapshot was not read to its end and the temporary files are removed",
};

/** A record's identity in a run: its kind's rank, then its key (a resource's `{type}\0{id}`). */
const RANK: Record<RecordKind, string> = {
  resource_type: "0",
  resource: "1",
  entitlement: "2",
  grant: "3",
};
const KIND_OF_RANK = Object.fromEntries(
  Object.entries(RANK).map(([kind, rank]) => [rank, kind as RecordKind]),
);

const KEY_CODEC: RunCodec<Keyed> = {
  encode: (record) => escapeLine(record.key),
  decode: (line) => ({ key: unescapeLine(line) }),
};

/** A record the snapshot holds twice: its kind and its key as a refusal names it. */
export interface RepeatedRecord {
  kind: RecordKind;
  key: string;
}

/**
 * Finds a record a snapshot holds twice on disk, in memory flat in the snapshot's size: each
 * record's identity goes to a buffer of `RUN_RECORDS`, written as a sorted run when full (a key
 * twice in one run is found there), and the runs are merged once at the end (a key in two runs),
 * as `diff` finds one. Temporary files in the system's temporary directory (TMPDIR), removed by
 * `close`, and by a signal (lib/snapshot/tempFiles).
 */
export class DuplicateCheck {
  readonly #file: string;
  readonly #files: RunFiles;
  readonly #runRecords: number;
  #buffer: RunEntry[] = [];
  readonly #runs: string[] = [];
  #repeated: Keyed | undefined;

  /** Checks the records of the snapshot `file` (named by the runs' failures). */
  constructor(file: string, options: { dir?: string; runRecords?: number } = {}) {
    this.#file = file;
    this.#files = new RunFiles(options.dir ?? tmpdir(), KEY_FILES);
    this.#runRecords = options.runRecords ?? RUN_RECORDS;
  }

  /** Takes a record's identity; a promise while a full buffer is written as a run. */
  add(line: BodyLine): undefined | Promise<void> {
    if (this.#repeated) return undefined;
    const key = RANK[line.kind] + recordIdentity(line).hashKey;
    this.#buffer.push({ key, line: KEY_CODEC.encode({ key }) });
    return this.#buffer.length < this.#runRecords ? undefined : this.#flush();
  }

  /** After the last record: one record held twice (the lowest key when several are), or undefined. */
  async repeated(): Promise<RepeatedRecord | undefined> {
    if (!this.#repeated && this.#buffer.length > 0) await this.#flush();
    if (!this.#repeated) {
      await mergeRuns(this.#files, "keys", this.#runs, this.#file, KEY_CODEC, MAX_FAN_IN).catch(
        (error: unknown) => this.#keepRepeat(error),
      );
    }
    return this.#repeated && identityOf(this.#repeated.key);
  }

  /** Removes the runs; never throws. */
  async close(): Promise<void> {
    this.#buffer = [];
    await this.#files.removeAll();
  }

  async #flush(): Promise<void> {
    const full = this.#buffer;
    this.#buffer = [];
    await writeRun(this.#files, "keys", full, this.#file, KEY_CODEC).then(
      (run) => {
        this.#runs.push(run);
      },
      (error: unknown) => this.#keepRepeat(error),
    );
  }

  #keepRepeat(error: unknown): void {
    if (!(error instanceof RepeatedKey)) throw error;
    this.#repeated ??= error.record;
  }
}

/** The kind and key of an identity in a run: a resource's `{type}\0{id}` as `{type}:{id}`. */
function identityOf(key: string): RepeatedRecord {
  const kind = KIND_OF_RANK[key[0] as string] as RecordKind;
  const rest = key.slice(1);
  return { kind, key: kind === "resource" ? rest.replace("\u0000", ":") : rest };
}
