import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { SQSEvent, SQSRecord } from "aws-lambda";
import { telemetry, withPowertools } from "../../lib/cloud/aws/powertools";
import { loadCloudConfig } from "../../lib/cloud/config";
import { processJobMessage } from "../../lib/cloud/syncWorker";

const processor = new BatchProcessor(EventType.SQS);

/** The sync-jobs queue: one job a message, the batch's jobs at once, failures reported per message. */
export const handler = withPowertools(async (event: SQSEvent, context) => {
  const invocation = {
    config: loadCloudConfig(),
    telemetry,
    remainingMs: () => context.getRemainingTimeInMillis(),
  };
  return processPartialResponse(
    event,
    (record: SQSRecord) => processJobMessage(record, invocation),
    processor,
    {
      context,
    },
  );
});
