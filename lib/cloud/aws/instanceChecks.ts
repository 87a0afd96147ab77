import { SendMessageBatchCommand } from "@aws-sdk/client-sqs";
import * as z from "zod";
import { awsClients } from "./clients";

/** The instance-checks queue's message: look at this instance now (see `checkInstance`). */
export const instanceCheckMessage = z.object({ connectorId: z.string().min(1) }).strict();

/** SQS takes at most this many messages in one SendMessageBatch. */
export const CHECKS_PER_BATCH = 10;

/** Sends one check per instance, in one batch of at most `CHECKS_PER_BATCH`; a partial refusal throws. */
export async function sendInstanceChecks(
  queueUrl: string,
  connectorIds: readonly string[],
): Promise<void> {
  const { Failed } = await awsClients().sqs.send(
    new SendMessageBatchCommand({
      QueueUrl: queueUrl,
      Entries: connectorIds.map((connectorId, n) => ({
        Id: String(n),
        MessageBody: JSON.stringify({ connectorId }),
      })),
    }),
  );
  if (Failed && Failed.length > 0) {
    throw new Error(
      `SQS refused ${Failed.length} of ${connectorIds.length} instance checks: ${Failed.map((f) => f.Message ?? f.Code).join("; ")}`,
    );
  }
}
