import { SendMessageBatchCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import * as z from "zod";
import type { Job } from "../../sync";
import { awsClients } from "./clients";

/** The finalize queue's message: the run whose jobs are all done. */
export const finalizeMessage = z.object({ syncId: z.string().min(1) }).strict();
export type FinalizeMessage = z.infer<typeof finalizeMessage>;

/** Sends jobs to the sync-jobs queue, ten to a batch; a partly failed batch throws. */
export async function sendJobs(queueUrl: string, jobs: readonly Job[], delaySeconds = 0) {
  for (let i = 0; i < jobs.length; i += 10) {
    const batch = jobs.slice(i, i + 10);
    const { Failed } = await awsClients().sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: batch.map((job, n) => ({
          Id: String(n),
          MessageBody: JSON.stringify(job),
          ...(delaySeconds > 0 ? { DelaySeconds: delaySeconds } : {}),
        })),
      }),
    );
    if (Failed && Failed.length > 0) {
      throw new Error(
        `SQS refused ${Failed.length} of ${batch.length} jobs: ${Failed.map((f) => f.Message ?? f.Code).join("; ")}`,
      );
    }
  }
}

export async function sendFinalize(queueUrl: string, message: FinalizeMessage): Promise<void> {
  await awsClients().sqs.send(
    new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(message) }),
  );
}
