import { telemetry, withPowertools } from "../../lib/cloud/aws/powertools";
import { loadCloudConfig } from "../../lib/cloud/config";
import { schedule } from "../../lib/cloud/scheduler";

/** EventBridge schedule (every due instance) or a direct invoke with `{connectorId}`. */
export const handler = withPowertools(async (event: unknown) =>
  schedule(event, loadCloudConfig(), telemetry),
);
