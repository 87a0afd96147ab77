import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { SQSEvent, SQSRecord } from "aws-lambda";
import { telemetry, withPowertools } from "../../lib/cloud/aws/powertools";
import { loadCloudConfig } from "../../lib/cloud/config";
import { finalizeRecord } from "../../lib/cloud/finalize";

const processor = new BatchProcessor(EventType.SQS);

/** The finalize queue: publishes the run each message names. */
export const handler = withPowertools(async (event: SQSEvent, context) => {
  const config = loadCloudConfig();
  return processPartialResponse(
    event,
    (record: SQSRecord) => finalizeRecord(record.body, config, telemetry),
    processor,
    { context },
  );
});
