import { ConnectorError, ExitCode } from "../errors";

/**
 * A file `diff` cannot compare: unreadable, not a complete snapshot, or of another connector than
 * the other file. The message names the file and what is wrong (exit 2, like `diff(1)`'s trouble).
 */
export class SnapshotInputError extends ConnectorError {
  override name = "SnapshotInputError";
  override readonly code: string = "bad_snapshot";
  override readonly exitCode: ExitCode = ExitCode.usage;

  static unreadable(path: string, error: unknown): SnapshotInputError {
    const code = (error as { code?: unknown })?.code;
    const why =
      code === "ENOENT"
        ? "no such file"
        : code === "EISDIR"
          ? "it is a directory"
          : code === "EACCES"
            ? "permission denied"
            : error instanceof Error
              ? error.message
              : String(error);
    return new SnapshotInputError(`${path} cannot be read: ${why}`);
  }

  static notComplete(path: string, why: string): SnapshotInputError {
    return new SnapshotInputError(
      `${path} is not a complete snapshot: ${why}; diff compares two files a sync wrote whole`,
    );
  }

  static override is(error: unknown): error is SnapshotInputError {
    return error instanceof SnapshotInputError;
  }
}

/** The temporary files of a diff could not be written (a full disk, say): a runtime failure (exit 1). */
export class DiffWorkError extends ConnectorError {
  override name = "DiffWorkError";
  override readonly code: string = "diff_work_failed";

  constructor(error: unknown) {
    super(
      `diff could not write its temporary files: ${error instanceof Error ? error.message : String(error)} (set TMPDIR to a directory with room)`,
    );
  }
}
