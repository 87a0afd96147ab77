import { messageOf } from "../errors";
import { INSTANCES_PER_SEND } from "./aws/instanceChecks";
import { dueAt, type InstanceRow, isDue } from "./aws/instances";

/**
 * What a sweep sends, in order: the due instances, the most overdue first (ties: the row changed
 * longest ago, then the id), then those with a current run, the oldest run first. An instance a
 * sweep could not send before its deadline is only more overdue at the next sweep, so it goes
 * ahead of those that fell due since: none waits behind newer ones for ever.
 */
export function sweepOrder(
  rows: readonly InstanceRow[],
  now: Date,
): { starts: string[]; checks: string[] } {
  const due = rows
    .filter((row) => isDue(row, now))
    .sort(
      (a, b) =>
        dueAt(a) - dueAt(b) ||
        a.updatedAt.localeCompare(b.updatedAt) ||
        a.connectorId.localeCompare(b.connectorId),
    );
  const running = rows
    .filter((row) => row.currentSyncId)
    .sort(
      (a, b) =>
        (a.currentStartedAt ?? "").localeCompare(b.currentStartedAt ?? "") ||
        a.connectorId.localeCompare(b.connectorId),
    );
  return {
    starts: due.map((row) => row.connectorId),
    checks: running.map((row) => row.connectorId),
  };
}

export interface SendOutcome {
  /** Sent, in the order given. */
  sent: string[];
  /** Not sent: the sweep's deadline came first. */
  left: string[];
  failed: { connectorId: string; error: string }[];
}

/**
 * Sends `ids` in order, `INSTANCES_PER_SEND` to a batch and `inFlight` batches at a time; no batch
 * starts once `now()` has reached `deadlineAt`, so the sweep ends before its invocation does and
 * what is left waits for the next sweep. A batch that fails is reported, and the rest go on.
 */
export async function sendInOrder(
  ids: readonly string[],
  send: (batch: readonly string[]) => Promise<void>,
  options: { deadlineAt: number; inFlight: number; now?: () => number },
): Promise<SendOutcome> {
  const now = options.now ?? Date.now;
  const batches: string[][] = [];
  for (let i = 0; i < ids.length; i += INSTANCES_PER_SEND) {
    batches.push(ids.slice(i, i + INSTANCES_PER_SEND));
  }
  const sent = new Set<number>();
  const failed: SendOutcome["failed"] = [];
  let next = 0;
  const sender = async () => {
    while (next < batches.length && now() < options.deadlineAt) {
      const index = next++;
      const batch = batches[index] as string[];
      try {
        await send(batch);
        sent.add(index);
      } catch (error) {
        const message = messageOf(error);
        failed.push(...batch.map((connectorId) => ({ connectorId, error: message })));
      }
    }
  };
  await Promise.all(Array.from({ length: options.inFlight }, sender));
  return {
    sent: batches.filter((_, index) => sent.has(index)).flat(),
    left: batches.slice(next).flat(),
    failed,
  };
}
