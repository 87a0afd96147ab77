import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { SQSEvent, SQSRecord } from "aws-lambda";
import { telemetry, withPowertools } from "../../lib/cloud/aws/powertools";
import { loadCloudConfig } from "../../lib/cloud/config";
import { checkInstances, instanceChecksEvent, schedule } from "../../lib/cloud/scheduler";

const processor = new BatchProcessor(EventType.SQS);

/**
 * EventBridge schedule (the sweep), a direct invoke with `{connectorId}`, or the instance checks
 * the sweep sent (its SQS queue).
 */
export const handler = withPowertools(async (event: unknown, context) => {
  const config = loadCloudConfig();
  if (instanceChecksEvent.safeParse(event).success) {
    return processPartialResponse(
      event as SQSEvent,
      (record: SQSRecord) => checkInstances(record.body, config, telemetry),
      processor,
      { context },
    );
  }
  return schedule(event, config, telemetry, context.getRemainingTimeInMillis());
});
