import { open, stat } from "node:fs/promises";
import { SnapshotInputError } from "../../snapshot/errors";
import type { BodyLine } from "../../snapshot/records";
import { RunFiles, type RunOwner } from "../../sortedRuns/RunFiles";
import {
  escapeLine,
  type Keyed,
  MergedRuns,
  type RunCodec,
  readRun,
  unescapeLine,
} from "../../sortedRuns/runs";
import { csvCell } from "./csvCells";
import { PartitionFiles, partitionOf } from "./PartitionFiles";

/** Bytes of snapshot text a partition is made for: a partition's names take a few MB in memory. */
const PARTITION_BYTES = 16 * 1024 * 1024;
const MAX_PARTITIONS = 128;
/** How much larger a gzip snapshot's text is than its file, about. */
const GZIP_RATIO = 8;
/** Digits of a grant's place in the snapshot, so places sort as text. */
const PLACE_DIGITS = 12;

/** What a row shows of an entitlement: its name's cell and its resource's key, then both names' cells. */
interface EntitlementNames {
  nameCell: string;
  resourceKey: string;
  cells?: string;
}

/** A grant's row, keyed by its place in the snapshot. */
interface PlacedRow extends Keyed {
  line: string;
}

const PLACED_ROWS: RunCodec<PlacedRow> = {
  encode: (row) => row.line,
  decode: (line) => ({ key: line.slice(0, PLACE_DIGITS), line }),
};

/**
 * The csv's rows, one a grant in the snapshot's order, in memory flat in the snapshot's size and
 * without a lookup a grant (docs/review-tools.md): a hash join on disk. `add` takes the snapshot's
 * records as it is read once: each resource's cells (name, login, email, status) go to a partition
 * file by its key's hash, each grant (its place, its principal's key, its own cells) to the
 * partition of its principal's key; entitlements stay in memory (a few tens of thousands at
 * 1,000,000 users, as the c1z keeps them). `rows` then names each entitlement from its resource's
 * partition, and joins one partition at a time: its resources in a map, its grants read in the
 * snapshot's order, each written as its row; merging the partitions' rows by place gives them in
 * the snapshot's order. Temporary files in TMPDIR, removed by `close` and by a signal
 * (lib/snapshot/tempFiles).
 */
export class GrantRows {
  readonly #snapshot: string;
  readonly #files: RunFiles;
  readonly #count: number;
  readonly #resources: PartitionFiles;
  readonly #grants: PartitionFiles;
  readonly #entitlements = new Map<string, EntitlementNames>();
  #place = 0;

  private constructor(snapshot: string, files: RunFiles, count: number) {
    this.#snapshot = snapshot;
    this.#files = files;
    this.#count = count;
    this.#resources = new PartitionFiles(files, "resources", count);
    this.#grants = new PartitionFiles(files, "grants", count);
  }

  /**
   * The join of the snapshot at `snapshot`, for the csv `outPath` (named by a write failure), in
   * `partitions` (by default as many as the snapshot's size asks for).
   */
  static async open(snapshot: string, outPath: string, partitions?: number): Promise<GrantRows> {
    const owner: RunOwner = {
      slug: "csv",
      what: "a temporary file of the csv export",
      outcome: `nothing was exported and ${outPath} is as it was`,
    };
    const count = partitions ?? (await partitionsFor(snapshot));
    return new GrantRows(snapshot, new RunFiles(undefined, owner), count);
  }

  /** Takes a record of the snapshot; a promise while a partition's full chunk is written. */
  add(record: BodyLine): undefined | Promise<void> {
    switch (record.kind) {
      case "resource": {
        const key = resourceKey(record.type, record.id);
        const user = record.user;
        const cells = `${csvCell(user?.login ?? "")},${csvCell(user?.emails[0] ?? "")},${csvCell(record.status ?? "")}`;
        const line = JSON.stringify([key, csvCell(record.displayName), cells]);
        return this.#resources.add(partitionOf(key, this.#count), line);
      }
      case "entitlement":
        this.#entitlements.set(record.id, {
          nameCell: csvCell(record.displayName),
          resourceKey: resourceKey(record.resource.type, record.resource.id),
        });
        return undefined;
      case "grant": {
        const { principal } = record;
        const key = resourceKey(principal.type, principal.id);
        const ids = `${csvCell(principal.id)},${csvCell(record.entitlement)}`;
        const line = JSON.stringify([this.#place++, key, record.entitlement, record.id, ids]);
        return this.#grants.add(partitionOf(key, this.#count), line);
      }
      default:
        return undefined;
    }
  }

  /** After the last record: the rows' text in the snapshot's order, a batch at a time. */
  async *rows(): AsyncGenerator<string> {
    await this.#resources.end();
    await this.#grants.end();
    for (const path of this.#resources.paths) await this.#nameEntitlements(path);
    const joined: string[] = [];
    for (let at = 0; at < this.#count; at++) joined.push(await this.#join(at));
    const merged = await MergedRuns.open(joined, this.#snapshot, PLACED_ROWS);
    try {
      let text = "";
      for (let row = merged.head; row; row = merged.head) {
        text += `${unescapeLine(row.line.slice(PLACE_DIGITS))}\r\n`;
        if (text.length >= ROWS_CHUNK) {
          yield text;
          text = "";
        }
        const pending = merged.next();
        if (pending) await pending;
      }
      yield text;
    } finally {
      await merged.close();
    }
  }

  /** Removes the temporary files; never throws. */
  async close(): Promise<void> {
    this.#resources.destroy();
    this.#grants.destroy();
    await this.#files.removeAll();
  }

  /** Names the entitlements whose resource is in the partition file `path`. */
  async #nameEntitlements(path: string): Promise<void> {
    const names = new Map<string, string>();
    for await (const batch of readRun(path, JSON.parse)) {
      for (const [key, name] of batch as string[][]) names.set(key as string, name as string);
    }
    for (const entitlement of this.#entitlements.values()) {
      const name = names.get(entitlement.resourceKey);
      if (name !== undefined) entitlement.cells = `${entitlement.nameCell},${name}`;
    }
  }

  /**
   * Partition `at`: its resources' cells in a map, then its grants, in the snapshot's order, each
   * written as its row behind its place to a file whose path it returns (the partition's files
   * removed). A grant whose principal or entitlement the snapshot lacks refuses it.
   */
  async #join(at: number): Promise<string> {
    const cells = new Map<string, string>();
    for await (const batch of readRun(this.#resources.paths[at] as string, JSON.parse)) {
      for (const [key, name, rest] of batch as string[][])
        cells.set(key as string, `${name},${rest}`);
    }
    const out = new PartitionFiles(this.#files, "rows", 1);
    try {
      for await (const batch of readRun(this.#grants.paths[at] as string, JSON.parse)) {
        for (const [place, key, entitlement, id, ids] of batch as GrantLine[]) {
          const holder = cells.get(key);
          const names = this.#entitlements.get(entitlement)?.cells;
          if (holder === undefined || names === undefined) throw this.#dangling(id);
          const row = escapeLine(`${holder},${names},${ids}`);
          const pending = out.add(0, `${String(place).padStart(PLACE_DIGITS, "0")}${row}`);
          if (pending) await pending;
        }
      }
      await out.end();
    } catch (error) {
      out.destroy();
      throw error;
    }
    await this.#files.remove(this.#resources.paths[at] as string);
    await this.#files.remove(this.#grants.paths[at] as string);
    return out.paths[0] as string;
  }

  #dangling(id: string): SnapshotInputError {
    return SnapshotInputError.notComplete(
      this.#snapshot,
      `grant ${id} names a principal or an entitlement the snapshot does not hold`,
    );
  }
}

/** A grant in its partition: its place, its principal's key, its entitlement, its id, its ids' cells. */
type GrantLine = [number, string, string, string, string];

/** Rows handed out at once, in characters. */
const ROWS_CHUNK = 64 * 1024;

/** A resource's key, unambiguous whatever its type and id hold. */
function resourceKey(type: string, id: string): string {
  return `${type.length}:${type}${id}`;
}

/**
 * Partitions for the snapshot at `path`, by the size of its text; one for a file that cannot be
 * read (the snapshot's reader then refuses it in its own words).
 */
async function partitionsFor(path: string): Promise<number> {
  const magic = Buffer.alloc(2);
  let size: number;
  try {
    size = (await stat(path)).size;
    const handle = await open(path, "r");
    try {
      await handle.read(magic, 0, 2, 0);
    } finally {
      await handle.close();
    }
  } catch {
    return 1;
  }
  const text = magic[0] === 0x1f && magic[1] === 0x8b ? size * GZIP_RATIO : size;
  return Math.min(MAX_PARTITIONS, Math.max(1, Math.ceil(text / PARTITION_BYTES)));
}
