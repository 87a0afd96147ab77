import { lstat, rename } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { ConnectorName } from "../connectors";
import { UsageError } from "../errors";
import {
  countRemovalsFromFile,
  digestSnapshotFile,
  type PreviousRemovals,
  type SnapshotDigest,
} from "../guard";
import type { GuardStore } from "../publish";
import { writeFailure } from "../sync/errors";

/** The snapshot `sync` writes when no --out is given. */
export const defaultSnapshotFile = (connector: ConnectorName) => `${connector}.sync.jsonl`;

/**
 * Where `sync` keeps a snapshot the guard held: beside --out, `.held` before its `.jsonl` or
 * `.gz` ending (`blackline.sync.jsonl` -> `blackline.sync.held.jsonl`), so a `.gz` stays gzip.
 */
export function heldPathFor(outFile: string): string {
  const name = basename(outFile).replace(/(\.jsonl)?(\.gz)?$/, ".held$1$2");
  return join(dirname(outFile), name);
}

/** The exact command that releases what `sync` held for `outFile`. */
export function releaseCommand(connector: ConnectorName, outFile: string): string {
  return `access-connectors release ${connector} --out ${shellWord(outFile)}`;
}

/**
 * The removal guard's store on the command line: the files at --out and beside it. The published
 * snapshot is the file at --out (no digest is kept: it is read when the next sync compares, and
 * one that is not a complete snapshot is nothing to compare with). A new snapshot is written at
 * the held path, so holding it leaves it there; publishing renames it onto --out.
 */
export class SnapshotFiles implements GuardStore {
  readonly outFile: string;
  readonly heldFile: string;
  readonly #connector: ConnectorName;

  constructor(connector: ConnectorName, outFile: string) {
    this.#connector = connector;
    this.outFile = outFile;
    this.heldFile = heldPathFor(outFile);
  }

  async published(): Promise<SnapshotDigest | undefined> {
    if (!(await isRegularFile(this.outFile))) return undefined;
    const result = await digestSnapshotFile(this.outFile);
    return "digest" in result ? result.digest : undefined;
  }

  async removals(next: SnapshotDigest): Promise<PreviousRemovals | undefined> {
    if (!(await isRegularFile(this.outFile))) return undefined;
    const result = await countRemovalsFromFile(this.outFile, next);
    return "notSnapshot" in result ? undefined : result;
  }

  async hold(): Promise<void> {}

  /** A held file that is not a complete snapshot of this connector is refused and left where it is. */
  async held(): Promise<SnapshotDigest | undefined> {
    if (!(await isRegularFile(this.heldFile))) return undefined;
    const held = await digestSnapshotFile(this.heldFile);
    if ("digest" in held && held.digest.connector === this.#connector) return held.digest;
    const why = "digest" in held ? `it is a ${held.digest.connector} snapshot` : held.notSnapshot;
    throw new UsageError(
      `${this.heldFile} is not a complete ${this.#connector} snapshot (${why}); it was left where it is`,
    );
  }

  withHeldSnapshot<T>(use: (snapshotFile: string) => Promise<T>): Promise<T> {
    return use(this.heldFile);
  }

  /** The publisher: the snapshot replaces --out; a rename the system refuses names --out. */
  readonly publish = async (snapshotFile: string): Promise<void> => {
    await rename(snapshotFile, this.outFile).catch((error: unknown) => {
      throw writeFailure(error, {
        what: "the snapshot",
        path: this.outFile,
        elsewhere: "choose another --out",
      });
    });
  };
}

async function isRegularFile(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => undefined))?.isFile() ?? false;
}

/** A path as one word of a POSIX shell command. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
