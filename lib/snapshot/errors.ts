import { messageOf, UsageError } from "../errors";

/**
 * A snapshot file a reader refuses: unreadable, or not a complete snapshot (its structure, its
 * `sync_end`, a record twice). `diff`, `export` and `explore` throw this one error with the same
 * words for the same file (exit 2), so the three commands never give three answers on it.
 */
export class SnapshotInputError extends UsageError {
  override name = "SnapshotInputError";
  override readonly code: string = "bad_snapshot";

  static unreadable(path: string, error: unknown): SnapshotInputError {
    const code = (error as { code?: unknown })?.code;
    const why =
      code === "ENOENT"
        ? "no such file"
        : code === "EISDIR"
          ? "it is a directory"
          : code === "EACCES"
            ? "permission denied"
            : messageOf(error);
    return new SnapshotInputError(
      `${path} cannot be read: ${why}${typeof code === "string" ? ` (${code})` : ""}; check the path`,
    );
  }

  /** Why the file is not a complete snapshot: one of the reasons below, or `readCompleteSnapshot`'s. */
  static notComplete(path: string, why: string): SnapshotInputError {
    return new SnapshotInputError(
      `${path} is not a complete snapshot: ${why}; give a file a sync wrote whole`,
    );
  }
}

/** A record key seen twice in one file (a resource is `{type}:{id}`, the others their `id`). */
export function duplicateRecord(kind: string, key: string, lines: readonly number[]): string {
  const where =
    lines.length >= 2
      ? ` (lines ${lines[0]} and ${lines[1]})`
      : lines.length === 1
        ? ` (line ${lines[0]})`
        : "";
  return `it holds ${kind} ${key} twice${where}`;
}

/** `sync_end.counts` disagrees with the records read of one kind. */
export function countsMismatch(kind: string, declared: number, held: number): string {
  return `its sync_end counts ${declared} ${kind} records but it holds ${held}`;
}

/** `sync_end` closes another sync than the one `sync_start` opened. */
export function syncIdMismatch(start: string, end: string): string {
  return `its sync_end's syncId ${JSON.stringify(end)} is not its sync_start's ${JSON.stringify(start)}`;
}
