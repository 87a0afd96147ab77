import { dirname } from "node:path";
import { type Bound, formatDuration } from "../config";
import { ConnectorError } from "../errors";

/**
 * A sync ran past its deadline (CONNECTOR_<APP>_SYNC_DEADLINE): its requests were stopped and
 * nothing was published. The same reason ends a cloud run that grew older than the deadline.
 */
export class SyncDeadlineError extends ConnectorError {
  override name = "SyncDeadlineError";
  override readonly code: string = "sync_deadline_exceeded";
  readonly deadline: Bound;

  constructor(deadline: Bound) {
    super(
      `the sync did not finish within ${formatDuration(deadline.value)}, its deadline (${deadline.variable}), so it was stopped and nothing was published: the previous snapshot stands. If the tenant is that large or the upstream that slow, raise ${deadline.variable} (at most 168h)`,
    );
    this.deadline = deadline;
  }
}

/** The kind of a write that failed, as its `code` says it. */
export type WriteFailure = "disk_full" | "read_only" | "no_permission" | "write_failed";

/**
 * A file could not be written: a sync's snapshot (the temporary file beside the snapshot's path)
 * or grant spool, or one of the service's state files (its state, health file, the guard's
 * digests). The message names the file, what the system said, what became of the work and what
 * to free or change; a sync stops, its temporary files are removed and the previous snapshot
 * stands.
 */
export class WriteFailedError extends ConnectorError {
  override name = "WriteFailedError";
  override readonly code: WriteFailure;
  /** The file that could not be written. */
  readonly path: string;

  constructor(code: WriteFailure, message: string, path: string, cause: unknown) {
    super(message, { cause });
    this.code = code;
    this.path = path;
  }
}

/** A file the product writes, as messages name it. */
export interface SyncFile {
  /** What the file is, e.g. `the snapshot`. */
  what: string;
  path: string;
  /** How to write it elsewhere, e.g. `point --out at another filesystem`. */
  elsewhere: string;
  /**
   * What the failure means for the work, after "so": by default a sync's,
   * `the sync stopped and nothing was published; the previous snapshot stands`.
   */
  outcome?: string;
}

const SYNC_OUTCOME = "the sync stopped and nothing was published; the previous snapshot stands";

/**
 * The error to report when writing `file` failed with `error`: a `WriteFailedError` naming the file,
 * the cause in words and the fix when `error` is the system's (it has an errno code such as
 * ENOSPC); any other error as it is. Node's own message (`ENOSPC: no space left on device,
 * write`) names neither the file nor the directory.
 */
export function writeFailure(error: unknown, file: SyncFile): unknown {
  if (WriteFailedError.is(error)) return error;
  const errno = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof errno !== "string" || !/^E[A-Z]+$/.test(errno)) return error;
  const dir = dirname(file.path);
  const [code, cause, fix] = explain(errno, dir, file, (error as Error).message);
  return new WriteFailedError(
    code,
    `cannot write ${file.what} ${file.path}: ${cause} (${errno}), so ${file.outcome ?? SYNC_OUTCOME}. ${fix}`,
    file.path,
    error,
  );
}

function explain(
  errno: string,
  dir: string,
  file: SyncFile,
  systemMessage: string,
): [WriteFailure, string, string] {
  const { elsewhere } = file;
  // How much room a sync's own files want; another file's message says nothing of it.
  const room =
    file.outcome === undefined
      ? " (a sync needs room for its snapshot and, while it runs, its grants again)"
      : "";
  switch (errno) {
    case "ENOSPC":
      return [
        "disk_full",
        `the filesystem holding ${dir} is full`,
        `Free space on it${room}, or ${elsewhere}`,
      ];
    case "EDQUOT":
      return [
        "disk_full",
        `this user's disk quota on the filesystem holding ${dir} is used up`,
        `Free space within the quota or raise it, or ${elsewhere}`,
      ];
    case "EROFS":
      return [
        "read_only",
        `the filesystem holding ${dir} is read-only`,
        `Remount it read-write, or ${elsewhere}`,
      ];
    case "EACCES":
    case "EPERM":
      return [
        "no_permission",
        `this process may not write in ${dir}`,
        `Give the user the sync runs as write access to ${dir}, or ${elsewhere}`,
      ];
    case "EFBIG":
      return [
        "write_failed",
        "the file reached the largest size this process may write (its file size limit, ulimit -f) or the filesystem allows",
        `Raise the limit, or ${elsewhere}`,
      ];
    default:
      return [
        "write_failed",
        `the system refused the write: ${systemMessage}`,
        `Check the device holding ${dir}, or ${elsewhere}`,
      ];
  }
}
