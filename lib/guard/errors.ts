import { ConnectorError, ExitCode } from "../errors";

/**
 * A complete snapshot held by the mass-deletion guard: it removes more of the previous snapshot's
 * users or grants than the limit allows. The message says how many, the limit, where the held
 * snapshot is and how to release it (exit 4).
 */
export class SnapshotHeldError extends ConnectorError {
  override name = "SnapshotHeldError";
  override readonly code: string = "snapshot_held";
  override readonly exitCode: ExitCode = ExitCode.snapshotHeld;
}
