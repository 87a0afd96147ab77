import { SendMessageBatchCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import * as z from "zod";
import type { Job } from "../../sync";
import { awsClients } from "./clients";

/** The finalize queue's message: the run whose jobs are all done. */
export const finalizeMessage = z.object({ syncId: z.string().min(1) }).strict();
export type FinalizeMessage = z.infer<typeof finalizeMessage>;

/** The message attribute counting a job's hand-backs for a rate limit (its backoff grows with it). */
export const RATE_REFUSALS_ATTRIBUTE = "rateRefusals";

export interface SendOptions {
  /** Delivered no sooner than this (SQS's DelaySeconds, at most 900). */
  delaySeconds?: number;
  /** The job's hand-backs for a rate limit so far, carried in `RATE_REFUSALS_ATTRIBUTE`. */
  rateRefusals?: number;
}

/**
 * Sends jobs to the sync-jobs queue, ten to a batch; a partly failed batch throws. Each message's
 * MessageGroupId is its instance: on a standard queue that makes it a fair queue, where SQS hands
 * out a quiet instance's jobs before those of an instance holding most of the jobs in flight, so
 * one tenant's backlog does not hold up the others (the order within an instance stays SQS's).
 */
export async function sendJobs(queueUrl: string, jobs: readonly Job[], options: SendOptions = {}) {
  const { delaySeconds = 0, rateRefusals = 0 } = options;
  for (let i = 0; i < jobs.length; i += 10) {
    const batch = jobs.slice(i, i + 10);
    const { Failed } = await awsClients().sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: batch.map((job, n) => ({
          Id: String(n),
          MessageBody: JSON.stringify(job),
          MessageGroupId: job.connectorId,
          ...(delaySeconds > 0 ? { DelaySeconds: delaySeconds } : {}),
          ...(rateRefusals > 0
            ? {
                MessageAttributes: {
                  [RATE_REFUSALS_ATTRIBUTE]: {
                    DataType: "Number",
                    StringValue: String(rateRefusals),
                  },
                },
              }
            : {}),
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
