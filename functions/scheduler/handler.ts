import { loadCloudConfig, schedule } from "../../lib/cloud";
import { telemetry, withPowertools } from "../../lib/cloud/aws/powertools";

/** EventBridge schedule (every due instance) or a direct invoke with `{connectorId}`. */
export const handler = withPowertools(async (event: unknown) =>
  schedule(event, loadCloudConfig(), telemetry),
);
