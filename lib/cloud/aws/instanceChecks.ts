import { SendMessageBatchCommand } from "@aws-sdk/client-sqs";
import * as z from "zod";
import { awsClients } from "./clients";

/** Instances one instance-checks message names: they are checked one after another. */
export const INSTANCES_PER_CHECK = 10;
/** SQS takes at most this many messages in one SendMessageBatch. */
const MESSAGES_PER_BATCH = 10;
/** Instances one `sendInstanceChecks` call takes: one SendMessageBatch. */
export const INSTANCES_PER_SEND = INSTANCES_PER_CHECK * MESSAGES_PER_BATCH;

/** The instance-checks queue's message: look at these instances now, in order (`checkInstances`). */
export const instanceCheckMessage = z
  .object({ connectorIds: z.array(z.string().min(1)).min(1).max(INSTANCES_PER_CHECK) })
  .strict();

/**
 * Sends checks of up to `INSTANCES_PER_SEND` instances, in order, `INSTANCES_PER_CHECK` to a
 * message and all in one SendMessageBatch (10,000 instances are 100 requests); a partial refusal
 * throws.
 */
export async function sendInstanceChecks(
  queueUrl: string,
  connectorIds: readonly string[],
): Promise<void> {
  const messages: string[][] = [];
  for (let i = 0; i < connectorIds.length; i += INSTANCES_PER_CHECK) {
    messages.push(connectorIds.slice(i, i + INSTANCES_PER_CHECK));
  }
  const { Failed } = await awsClients().sqs.send(
    new SendMessageBatchCommand({
      QueueUrl: queueUrl,
      Entries: messages.map((ids, n) => ({
        Id: String(n),
        MessageBody: JSON.stringify({ connectorIds: ids }),
      })),
    }),
  );
  if (Failed && Failed.length > 0) {
    throw new Error(
      `SQS refused ${Failed.length} of ${messages.length} instance-check messages: ${Failed.map((f) => f.Message ?? f.Code).join("; ")}`,
    );
  }
}
