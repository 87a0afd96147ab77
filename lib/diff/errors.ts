import { ConnectorError, messageOf } from "../errors";

/** A file `diff` cannot compare: lib/snapshot's one refusal, in the words every reader uses (exit 2). */
export { SnapshotInputError } from "../snapshot/errors";

/** The temporary files of a diff could not be written (a full disk, say): a runtime failure (exit 1). */
export class DiffWorkError extends ConnectorError {
  override name = "DiffWorkError";
  override readonly code: string = "diff_work_failed";

  constructor(error: unknown) {
    super(
      `diff could not write its temporary files: ${messageOf(error)} (set TMPDIR to a directory with room)`,
    );
  }
}
