import { messageOf } from "../errors";
import type { Logger } from "../logging";
import type { PlatformClient } from "../platform";

/**
 * Sends a heartbeat for `taskId` every `intervalMs` until stopped, one at a time (a slow answer
 * delays the next, never doubles it). A failed heartbeat is logged and the task goes on: the
 * finish is what counts.
 */
export function startHeartbeats(
  platform: PlatformClient,
  taskId: string,
  intervalMs: number,
  logger: Logger,
): { stop(): Promise<void> } {
  const controller = new AbortController();
  let inFlight: Promise<void> | undefined;
  let sent = 0;
  const beat = () => {
    if (inFlight) return;
    inFlight = platform
      .heartbeat(taskId, { signal: controller.signal })
      .then(() => {
        sent++;
        logger.debug("task heartbeat sent", { taskId, heartbeats: sent });
      })
      .catch((error: unknown) => {
        if (controller.signal.aborted) return;
        logger.warn("task heartbeat failed", {
          taskId,
          error: messageOf(error),
        });
      })
      .finally(() => {
        inFlight = undefined;
      });
  };
  const timer = setInterval(beat, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      controller.abort();
      await inFlight;
    },
  };
}
