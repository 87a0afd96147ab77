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

  static override is(error: unknown): error is SyncDeadlineError {
    return error instanceof SyncDeadlineError;
  }
}
