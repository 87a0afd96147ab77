import { logger, telemetry, withPowertools } from "../../lib/cloud/aws/powertools";
import { loadCloudConfig } from "../../lib/cloud/config";
import { handleSettings } from "../../lib/cloud/settings";

/** The platform's Settings page: a request of docs/settings.md in, its reply out. */
export const handler = withPowertools(async (event: unknown, context) => {
  const requestId = (event as { requestId?: unknown } | null)?.requestId;
  if (typeof requestId === "string") logger.appendKeys({ settingsRequestId: requestId });
  return handleSettings(event, context, loadCloudConfig(), telemetry);
});
