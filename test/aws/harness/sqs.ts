// Feeds a queue to its function the way a Lambda SQS event source mapping does: receive up to
// BatchSize messages (real ReceiveMessage on the emulator, so visibility and receive counts are
// SQS's own), invoke the function with a real SQS event, delete what succeeded, keep the rest.
// With FunctionResponseTypes ReportBatchItemFailures the response's batchItemFailures are kept
// (a malformed response fails the whole batch, as on Lambda); an invocation that throws, times
// out, crashes or is killed keeps the whole batch.
import { createHash } from "node:crypto";
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { SQSEvent, SQSRecord } from "aws-lambda";
import {
  type FunctionRuntime,
  type InvocationCost,
  type InvocationResult,
  type InvokeOptions,
  LambdaInvocationError,
} from "./lambda";

/** An event source mapping as deployed (read before the harness disabled it on moto). */
export interface QueueMapping {
  uuid: string;
  queueArn: string;
  /** The queue's URL on the emulator's host (GetQueueUrl). */
  queueUrl: string;
  batchSize: number;
  functionResponseTypes: string[];
  maximumConcurrency?: number;
  /** The queue's VisibilityTimeout, seconds. */
  visibilityTimeoutSeconds: number;
}

export interface DrainOptions {
  /** Give up (and throw) after this many invocations. Default 200. */
  maxInvocations?: number;
  /**
   * Invocations at once: pollers, each receiving a batch and invoking the function with it.
   * Default the mapping's `MaximumConcurrency` (10 for syncWorker), or 5 where it sets none (where
   * Lambda's poller starts); 1 delivers one batch at a time.
   */
  concurrency?: number;
  /** Give up (and throw) after this long. Default `DRAIN_TIMEOUT_MS`. */
  timeoutMs?: number;
  /**
   * At-least-once delivery: every batch is received twice (made visible again and received
   * anew, so each copy has its own receipt handle and receive count) and delivered as two
   * concurrent invocations, in two containers, before anything is deleted. Each copy is a
   * receive: ApproximateReceiveCount rises by 2 a round, so a message that keeps failing
   * reaches the dead-letter queue in half the rounds.
   */
  duplicateEveryMessage?: boolean;
  /**
   * A worker killed mid-batch: the container of each of the first `invocations` (default 1)
   * invocations is terminated after `ms` milliseconds, so no code of the handler runs after
   * that and nothing of the batch is deleted; the messages come back (see
   * releaseFailedMessages).
   */
  killAfter?: { ms: number; invocations?: number };
  /**
   * Make kept messages (failed, or of a failed or killed invocation) visible again at once
   * (ChangeMessageVisibility 0) instead of after the visibility timeout, which is minutes.
   * Default true. This overrides a visibility the handler set itself for a message it reported
   * as failed (e.g. a delay after a 429); pass false to keep it, and the drain then waits for
   * the message (within timeoutMs).
   */
  releaseFailedMessages?: boolean;
  /**
   * Keep polling an empty queue until this holds: for a drain that runs beside another (the
   * worker's and finalize's at once), whose invocations may still send messages here.
   */
  until?: () => boolean | Promise<boolean>;
  /** Messages a batch, at most 10; default the mapping's BatchSize. */
  batchSize?: number;
  /** Called with each batch received, before it is delivered (a test sees the receive order). */
  onBatch?: (records: SQSRecord[]) => void;
  /** Called with each batch whose invocation answered, and what the invocation cost. */
  onInvoked?: (records: SQSRecord[], cost: InvocationCost) => void;
}

export interface DrainStats {
  /** Invocations of the function (a duplicated batch counts twice). */
  invocations: number;
  /** Records delivered (a duplicated message counts twice). */
  messages: number;
  /** Summed duration of the invocations as the handler saw it, ms. */
  handlerMs: number;
  /** The longest invocation, ms. */
  longestMs: number;
  /** Summed CPU time of the containers' threads over the invocations that answered, ms. */
  handlerCpuMs: number;
  /** The most memory one container held during an invocation that answered (InvocationCost), bytes. */
  peakMemoryBytes: number;
  /** Records kept for another try: reported failures and records of failed invocations. */
  failedRecords: number;
  /** Messages deleted after success. */
  deleted: number;
  /** Invocations killed by `killAfter`. */
  kills: number;
  /** `errorType: message` of each invocation that threw, timed out or crashed (not kills). */
  errors: string[];
  /** Wall time of the drain, ms. */
  ms: number;
  /** The most invocations that ran at once. */
  peakConcurrency: number;
  /** Containers started (cold starts) during the drain; the others were warm ones reused. */
  containers: number;
}

const md5 = (text: string) => createHash("md5").update(text).digest("hex");

/** The record Lambda puts in an SQS event for one received message. */
export function sqsRecord(message: Message, mapping: QueueMapping, region: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  const messageAttributes: SQSRecord["messageAttributes"] = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    messageAttributes[name] = {
      dataType: value.DataType ?? "String",
      ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
      ...(value.BinaryValue !== undefined
        ? { binaryValue: Buffer.from(value.BinaryValue).toString("base64") }
        : {}),
      stringListValues: value.StringListValues ?? [],
      binaryListValues: (value.BinaryListValues ?? []).map((b) =>
        Buffer.from(b).toString("base64"),
      ),
    };
  }
  const body = message.Body ?? "";
  return {
    messageId: message.MessageId ?? "",
    receiptHandle: message.ReceiptHandle ?? "",
    body,
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? "1",
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? "AIDAIENQZJOLO23YVJ4VO",
      ApproximateFirstReceiveTimestamp:
        attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
      ...(attributes.MessageGroupId ? { MessageGroupId: attributes.MessageGroupId } : {}),
      ...(attributes.MessageDeduplicationId
        ? { MessageDeduplicationId: attributes.MessageDeduplicationId }
        : {}),
      ...(attributes.SequenceNumber ? { SequenceNumber: attributes.SequenceNumber } : {}),
      ...(attributes.AWSTraceHeader ? { AWSTraceHeader: attributes.AWSTraceHeader } : {}),
    },
    messageAttributes,
    md5OfBody: message.MD5OfBody ?? md5(body),
    ...(message.MD5OfMessageAttributes
      ? { md5OfMessageAttributes: message.MD5OfMessageAttributes }
      : {}),
    eventSource: "aws:sqs",
    eventSourceARN: mapping.queueArn,
    awsRegion: region,
  } as SQSRecord;
}

/** Which records of a batch the response keeps, per Lambda's rules for partial failures. */
export function keptRecords(records: SQSRecord[], response: unknown, reportsFailures: boolean) {
  if (!reportsFailures) return [];
  if (response === null || typeof response !== "object") return [];
  const failures = (response as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === undefined || failures === null) return [];
  const all = records;
  if (!Array.isArray(failures)) return all;
  const ids = new Set(records.map((r) => r.messageId));
  const kept = new Set<string>();
  for (const failure of failures) {
    const id = (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier;
    // An empty, missing or unknown identifier fails the whole batch.
    if (typeof id !== "string" || id === "" || !ids.has(id)) return all;
    kept.add(id);
  }
  return records.filter((r) => kept.has(r.messageId));
}

/**
 * A guard against a queue that never drains, not a performance bound: a drain that takes seconds
 * on an idle machine took five times as long on a loaded one (CI beside other jobs).
 */
const DRAIN_TIMEOUT_MS = 240_000;
/** Lambda starts five concurrent pollers on a queue whose mapping sets no maximum concurrency. */
const DEFAULT_CONCURRENCY = 5;
/**
 * An idle poller polls again after this long, doubling up to the most (moto has no long polling).
 * Lambda's pollers long-poll, so a message reaches the function about as it is sent: an idle poll
 * of up to 400 ms put that much before each run's finalize and its end, and the benches timed it.
 */
const MIN_IDLE_POLL_MS = 25;
const MAX_IDLE_POLL_MS = 100;

export async function drainQueue(
  sqs: SQSClient,
  runtime: FunctionRuntime,
  mapping: QueueMapping,
  region: string,
  options: DrainOptions = {},
): Promise<DrainStats> {
  const started = Date.now();
  const maxInvocations = options.maxInvocations ?? 200;
  const timeoutMs = options.timeoutMs ?? DRAIN_TIMEOUT_MS;
  const release = options.releaseFailedMessages ?? true;
  const concurrency = options.concurrency ?? mapping.maximumConcurrency ?? DEFAULT_CONCURRENCY;
  let killsLeft = options.killAfter ? (options.killAfter.invocations ?? 1) : 0;
  const reportsFailures = mapping.functionResponseTypes.includes("ReportBatchItemFailures");
  const batchSize = options.batchSize ?? mapping.batchSize;
  const key = runtime.config.key;
  const containersBefore = runtime.containersStarted;
  const stats: DrainStats = {
    invocations: 0,
    messages: 0,
    handlerMs: 0,
    longestMs: 0,
    handlerCpuMs: 0,
    peakMemoryBytes: 0,
    failedRecords: 0,
    deleted: 0,
    kills: 0,
    errors: [],
    ms: 0,
    peakConcurrency: 0,
    containers: 0,
  };

  const receive = async (max: number) =>
    (
      await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: mapping.queueUrl,
          MaxNumberOfMessages: Math.min(max, 10),
          MessageSystemAttributeNames: ["All"],
          MessageAttributeNames: ["All"],
          WaitTimeSeconds: 0,
        }),
      )
    ).Messages ?? [];

  /** At once (one request), so a batch released together is received together again. */
  const makeVisible = async (records: SQSRecord[]) => {
    for (let i = 0; i < records.length; i += 10) {
      await sqs
        .send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: mapping.queueUrl,
            Entries: records.slice(i, i + 10).map((record, n) => ({
              Id: String(n),
              ReceiptHandle: record.receiptHandle,
              VisibilityTimeout: 0,
            })),
          }),
        )
        // Deleted meanwhile through another copy's receipt handle: nothing to release.
        .catch(() => {});
    }
  };

  // With duplicateEveryMessage, a batch is received, released and received again by one poller
  // while the others wait, so the second copy is that poller's.
  let receiving: Promise<unknown> = Promise.resolve();
  const receiveBatches = async (): Promise<Message[][]> => {
    if (!options.duplicateEveryMessage) {
      const batch = await receive(batchSize);
      return batch.length > 0 ? [batch] : [];
    }
    const turn = receiving.then(async () => {
      const batch = await receive(batchSize);
      if (batch.length === 0) return [];
      await makeVisible(batch.map((m) => sqsRecord(m, mapping, region)));
      const again = await receive(batch.length);
      return again.length > 0 ? [batch, again] : [batch];
    });
    receiving = turn.catch(() => {});
    return turn;
  };

  let inFlight = 0;
  const deliver = async (messages: Message[]) => {
    const records = messages.map((m) => sqsRecord(m, mapping, region));
    options.onBatch?.(records);
    const event: SQSEvent = { Records: records };
    const invokeOptions: InvokeOptions = {};
    if (killsLeft > 0 && options.killAfter) {
      killsLeft--;
      invokeOptions.killAfterMs = options.killAfter.ms;
    }
    stats.invocations++;
    stats.messages += records.length;
    inFlight++;
    stats.peakConcurrency = Math.max(stats.peakConcurrency, inFlight);
    let kept: SQSRecord[];
    const t0 = performance.now();
    try {
      const { result, ms, cpuMs, peakMemoryBytes }: InvocationResult = await runtime.invoke(
        event,
        invokeOptions,
      );
      stats.handlerMs += ms;
      stats.longestMs = Math.max(stats.longestMs, ms);
      stats.handlerCpuMs += cpuMs;
      stats.peakMemoryBytes = Math.max(stats.peakMemoryBytes, peakMemoryBytes);
      options.onInvoked?.(records, { ms, cpuMs, peakMemoryBytes });
      kept = keptRecords(records, result, reportsFailures);
    } catch (error) {
      stats.handlerMs += performance.now() - t0;
      stats.longestMs = Math.max(stats.longestMs, performance.now() - t0);
      if (!(error instanceof LambdaInvocationError)) throw error;
      if (error.errorType === "Harness.Killed") stats.kills++;
      else stats.errors.push(`${error.errorType}: ${error.message}`);
      kept = records;
    } finally {
      inFlight--;
    }
    stats.failedRecords += kept.length;
    const keptIds = new Set(kept.map((r) => r.messageId));
    const done = records.filter((r) => !keptIds.has(r.messageId));
    return { done, kept };
  };

  /** One batch (and its copy, with duplicateEveryMessage): delivered, successes deleted. */
  const handle = async (batches: Message[][]) => {
    const outcomes = await Promise.all(batches.map(deliver));
    const deletedIds = new Set<string>();
    for (const { done } of outcomes) {
      const records = done.filter((r) => !deletedIds.has(r.messageId));
      for (const record of records) deletedIds.add(record.messageId);
      stats.deleted += records.length;
      for (let i = 0; i < done.length; i += 10) {
        await sqs
          .send(
            new DeleteMessageBatchCommand({
              QueueUrl: mapping.queueUrl,
              Entries: done.slice(i, i + 10).map((record, n) => ({
                Id: String(n),
                ReceiptHandle: record.receiptHandle,
              })),
            }),
          )
          // A copy's receipt handle of a message deleted through the other: nothing to delete.
          .catch(() => {});
      }
    }
    if (release) {
      for (const { kept } of outcomes) {
        await makeVisible(kept.filter((r) => !deletedIds.has(r.messageId)));
      }
    }
  };

  // The pollers: each receives a batch and invokes the function with it, as Lambda's poller runs
  // up to the mapping's maximum concurrency of invocations at once. moto has no long polling and
  // serves one request at a time, so idle pollers do not all poll it: one of them (the scout)
  // polls, backing off, and wakes the others when it finds a batch; a finished invocation (which
  // may have sent messages) wakes them too. The queue is drained when no invocation is running and
  // SQS counts none visible, in flight or delayed (and `until` holds).
  let handling = 0;
  let finished = false;
  let scouting = false;
  let wakeUp = () => {};
  let woken = Promise.resolve();
  const wakeAll = () => {
    wakeUp();
    woken = new Promise<void>((resolveWoken) => {
      wakeUp = resolveWoken;
    });
  };
  wakeAll();
  const drained = async () => {
    if (handling > 0) return false;
    const a = await counts();
    if (handling > 0 || a.visible + a.inFlight + a.delayed > 0) return false;
    return options.until ? options.until() : true;
  };
  const poll = async () => {
    let idleMs = 0;
    while (!finished) {
      if (stats.invocations >= maxInvocations || Date.now() - started > timeoutMs) {
        finished = true;
        wakeAll();
        const a = await counts();
        throw new Error(
          `drainQueue(${key}): gave up after ${stats.invocations} invocations and ` +
            `${Date.now() - started} ms with ${a.visible} messages visible, ${a.inFlight} in flight, ` +
            `${a.delayed} delayed; errors: ${stats.errors.slice(-3).join(" | ") || "none"}`,
        );
      }
      const batches = await receiveBatches();
      if (batches.length > 0) {
        idleMs = 0;
        wakeAll();
        handling++;
        try {
          await handle(batches);
        } finally {
          handling--;
          wakeAll();
        }
        continue;
      }
      if (await drained()) {
        finished = true;
        wakeAll();
        break;
      }
      if (scouting) {
        await woken;
        continue;
      }
      scouting = true;
      idleMs = Math.min(MAX_IDLE_POLL_MS, Math.max(MIN_IDLE_POLL_MS, idleMs * 2));
      await Promise.race([woken, new Promise((r) => setTimeout(r, idleMs))]);
      scouting = false;
    }
  };
  const pollers = await Promise.allSettled(Array.from({ length: concurrency }, poll));
  stats.ms = Date.now() - started;
  stats.containers = runtime.containersStarted - containersBefore;
  const failed = pollers.find((p): p is PromiseRejectedResult => p.status === "rejected");
  if (failed) throw failed.reason;
  return stats;

  async function counts() {
    const { Attributes: a = {} } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: mapping.queueUrl,
        AttributeNames: [
          "ApproximateNumberOfMessages",
          "ApproximateNumberOfMessagesNotVisible",
          "ApproximateNumberOfMessagesDelayed",
        ],
      }),
    );
    return {
      visible: Number(a.ApproximateNumberOfMessages ?? 0),
      inFlight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
      delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
    };
  }
}
