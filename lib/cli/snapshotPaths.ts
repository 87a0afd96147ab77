import { basename, dirname, join } from "node:path";
import type { ConnectorName } from "../connectors/types";

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

/** A path as one word of a POSIX shell command. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
