import { handleAction } from "../../lib/cloud/action";
import { logger, telemetry, withPowertools } from "../../lib/cloud/aws/powertools";
import { loadCloudConfig } from "../../lib/cloud/config";

/** The platform's "Perform connector action" step: a request of docs/actions.md in, its reply out. */
export const handler = withPowertools(async (event: unknown, context) => {
  const requestId = (event as { requestId?: unknown } | null)?.requestId;
  if (typeof requestId === "string") logger.appendKeys({ actionRequestId: requestId });
  return handleAction(event, context, loadCloudConfig(), telemetry);
});
