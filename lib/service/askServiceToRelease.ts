import { setTimeout as sleep } from "node:timers/promises";
import { UsageError } from "../errors";
import type { SnapshotDigest } from "../guard";
import { RELEASE_WAIT_MS, SERVICE_VARIABLES } from "./constants";
import { HeldSnapshot, type ReleaseResult } from "./HeldSnapshot";

/** How often `release --service` looks for the service's answer. */
const ANSWER_POLL_MS = 250;

/**
 * `release --service`: asks the service running with `stateDir` to upload the snapshot it holds
 * (a request file in the state directory: only the service talks to the platform and writes its
 * state), calls `onAsked`, and waits up to RELEASE_WAIT_MS for the service's answer (none when it
 * did not answer in time). Nothing held is bad usage.
 */
export async function askServiceToRelease(
  stateDir: string,
  onAsked: (held: SnapshotDigest) => void,
): Promise<{ held: SnapshotDigest; answer?: ReleaseResult }> {
  const files = new HeldSnapshot(stateDir);
  const held = await files.held();
  if (!held) {
    throw new UsageError(
      `${SERVICE_VARIABLES.stateDir}: nothing is held in ${stateDir}; run this where the service runs (in its container), with its state directory`,
    );
  }
  await files.requestRelease(held.syncId);
  onAsked(held);
  const deadline = Date.now() + RELEASE_WAIT_MS;
  while (Date.now() < deadline) {
    const answer = await files.releaseAnswer(held.syncId);
    if (answer) return { held, answer };
    await sleep(ANSWER_POLL_MS);
  }
  return { held };
}
