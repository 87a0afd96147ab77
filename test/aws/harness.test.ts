// The harness itself: invocation the way Lambda invokes, and queue draining the way an SQS event
// source mapping does. syncWorker's code is replaced by a fixture handler (UpdateFunctionCode)
// whose behaviour each message's body chooses, so these tests do not depend on the real handlers.
// The deployed stack's own cases (deploy.ts) run first, on the same stack.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, get } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GetQueueAttributesCommand, SendMessageBatchCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import yazl from "yazl";
import { deployedStackCases } from "./deploy";
import {
  awsClientConfig,
  deployStack,
  LambdaInvocationError,
  type Moto,
  type Stack,
  startAwsRequestCounter,
  startMoto,
} from "./harness";

let moto: Moto;
let stack: Stack;
let sqs: SQSClient;
let dir: string;
let logFile: string;

/** One line per record the fixture saw (or per invocation for a direct invoke). */
interface Seen {
  phase: "start" | "end";
  id: string;
  messageId: string;
  receiveCount: number;
  receiptHandle: string;
  requestId: string;
  thread: number;
  at: number;
}

// Body of a fixture message: `failUntil`/`throwUntil` fail the record (or throw) while its
// ApproximateReceiveCount is at most that; `sleepMs` delays the invocation; `holdMb` holds a
// buffer of that many MiB through it.
const FIXTURE = (log: string) => `
import { appendFileSync } from "node:fs";
import { threadId } from "node:worker_threads";
let invocations = 0;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const note = (phase, r, ctx) => appendFileSync(${JSON.stringify(log)}, JSON.stringify({
  phase, id: JSON.parse(r.body).id, messageId: r.messageId,
  receiveCount: Number(r.attributes.ApproximateReceiveCount), receiptHandle: r.receiptHandle,
  requestId: ctx.awsRequestId, thread: threadId, at: Date.now() }) + "\\n");
export const handler = async (event, context) => {
  invocations++;
  if (!event.Records) {
    return { invocations, env: { ...process.env }, remaining: context.getRemainingTimeInMillis(),
      requestId: context.awsRequestId, functionName: context.functionName, event,
      ...(event.throw ? (() => { throw Object.assign(new Error(event.throw), { name: "FixtureError" }); })() : {}) };
  }
  const bodies = event.Records.map((r) => JSON.parse(r.body));
  for (const r of event.Records) note("start", r, context);
  const sleepMs = Math.max(0, ...bodies.map((b) => b.sleepMs ?? 0));
  const held = Buffer.alloc(Math.max(0, ...bodies.map((b) => b.holdMb ?? 0)) * 1048576, 1);
  if (sleepMs) await sleep(sleepMs);
  held.fill(2);
  const batchItemFailures = [];
  for (const [i, r] of event.Records.entries()) {
    const n = Number(r.attributes.ApproximateReceiveCount);
    if ((bodies[i].throwUntil ?? 0) >= n) throw new Error("fixture throws for " + bodies[i].id);
    if ((bodies[i].failUntil ?? 0) >= n) batchItemFailures.push({ itemIdentifier: r.messageId });
    else note("end", r, context);
  }
  return { batchItemFailures };
};
`;

function zip(files: Record<string, string>): Promise<Buffer> {
  return new Promise((resolveZip, reject) => {
    const z = new yazl.ZipFile();
    for (const [name, text] of Object.entries(files)) z.addBuffer(Buffer.from(text), name);
    z.end();
    const chunks: Buffer[] = [];
    z.outputStream.on("data", (c: Buffer) => chunks.push(c));
    z.outputStream.on("end", () => resolveZip(Buffer.concat(chunks)));
    z.outputStream.on("error", reject);
  });
}

async function seen(): Promise<Seen[]> {
  const text = await readFile(logFile, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Seen);
}

async function send(bodies: object[]) {
  for (let i = 0; i < bodies.length; i += 10) {
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: stack.outputs.SyncJobsQueueUrl,
        Entries: bodies.slice(i, i + 10).map((b, j) => ({
          Id: String(j),
          MessageBody: JSON.stringify(b),
        })),
      }),
    );
  }
}

async function queueCount(url: string | undefined) {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All"] }),
  );
  return (
    Number(Attributes.ApproximateNumberOfMessages) +
    Number(Attributes.ApproximateNumberOfMessagesNotVisible) +
    Number(Attributes.ApproximateNumberOfMessagesDelayed)
  );
}

beforeAll(async () => {
  moto = await startMoto();
  stack = await deployStack(moto, { stage: "dev" });
  sqs = new SQSClient({ ...awsClientConfig(moto.endpoint), useQueueUrlAsEndpoint: false });
  dir = await mkdtemp(join(tmpdir(), "harness-test-"));
  logFile = join(dir, "seen.jsonl");
  await stack.updateFunctionCode("syncWorker", await zip({ "handler.mjs": FIXTURE(logFile) }));
});

afterAll(async () => {
  sqs?.destroy();
  await stack?.close();
  await moto?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  await rm(logFile, { force: true });
});

describe("deployed stack", () => {
  deployedStackCases(() => ({ moto, stack }));
});

describe("invoke", () => {
  it("runs the packaged handler with the deployed environment, not the test's", async () => {
    const fn = stack.functions.syncWorker;
    const before = { ...process.env };
    const answer = await stack.invoke<{
      env: Record<string, string>;
      remaining: number;
      requestId: string;
      functionName: string;
      event: unknown;
    }>("syncWorker", { hello: "world" }, { awsRequestId: "req-1" });
    expect(process.env).toEqual(before);
    expect(answer.event).toEqual({ hello: "world" });
    expect(answer.requestId).toBe("req-1");
    expect(answer.functionName).toBe(fn?.name);
    expect(answer.remaining).toBeLessThanOrEqual(120_000);
    expect(answer.remaining).toBeGreaterThan(110_000);
    for (const [k, v] of Object.entries(fn?.environment ?? {})) expect(answer.env[k]).toBe(v);
    expect(answer.env.AWS_ENDPOINT_URL).toBe(moto.endpoint);
    expect(answer.env.AWS_LAMBDA_FUNCTION_NAME).toBe(fn?.name);
    expect(answer.env.AWS_EXECUTION_ENV).toBeUndefined();
  });

  it("keeps a warm container between invocations and reports a handler's error", async () => {
    const first = await stack.invoke<{ invocations: number }>("syncWorker", {});
    const second = await stack.invoke<{ invocations: number }>("syncWorker", {});
    expect(second.invocations).toBe(first.invocations + 1);
    const error = await stack.invoke("syncWorker", { throw: "boom" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LambdaInvocationError);
    expect(error).toMatchObject({ errorType: "FixtureError", message: "boom" });
  });

  it("applies a changed environment from the next (cold) invocation on", async () => {
    await stack.updateEnvironment("syncWorker", { RUN_STALL_SECONDS: "5" });
    const answer = await stack.invoke<{ invocations: number; env: Record<string, string> }>(
      "syncWorker",
      {},
    );
    expect(answer.env.RUN_STALL_SECONDS).toBe("5");
    expect(answer.invocations).toBe(1);
    await stack.updateEnvironment("syncWorker", { RUN_STALL_SECONDS: "900" });
  });
});

describe("drainQueue", () => {
  it("delivers batches of BatchSize, deletes successes and retries reported failures", async () => {
    const bodies = Array.from({ length: 25 }, (_, i) => ({
      id: `m${i}`,
      ...(i % 5 === 0 ? { failUntil: 2 } : {}),
    }));
    await send(bodies);
    const stats = await stack.drainQueue("syncWorker");
    const lines = await seen();
    const ends = lines.filter((l) => l.phase === "end");
    expect(new Set(ends.map((l) => l.id)).size).toBe(25);
    expect(ends).toHaveLength(25);
    const retried = lines.filter((l) => l.id === "m0" && l.phase === "start");
    expect(retried.map((l) => l.receiveCount)).toEqual([1, 2, 3]);
    expect(stats.messages).toBe(25 + 5 * 2);
    expect(stats.failedRecords).toBe(5 * 2);
    expect(stats.deleted).toBe(25);
    expect(stats.errors).toEqual([]);
    // At most 10 records an invocation.
    const perRequest = new Map<string, number>();
    for (const l of lines.filter((x) => x.phase === "start")) {
      perRequest.set(l.requestId, (perRequest.get(l.requestId) ?? 0) + 1);
    }
    expect(Math.max(...perRequest.values())).toBeLessThanOrEqual(10);
    expect(await queueCount(stack.outputs.SyncJobsQueueUrl)).toBe(0);
  });

  it("runs up to the mapping's MaximumConcurrency invocations at once, reusing warm containers", async () => {
    // Prepare: 15 batches whose invocations each take 300 ms, more than the pollers at once.
    const maximum = stack.functions.syncWorker?.queues[0]?.maximumConcurrency;
    expect(maximum).toBe(10);
    await send(Array.from({ length: 150 }, (_, i) => ({ id: `c${i}`, sleepMs: 300 })));

    // Act: drain it, then a second time the same shape (batches of 10: the deployed mapping's 1
    // would make 150 invocations of the test's time).
    const first = await stack.drainQueue("syncWorker", { batchSize: 10 });
    const threads = new Set((await seen()).map((l) => l.thread));
    await send(Array.from({ length: 50 }, (_, i) => ({ id: `w${i}`, sleepMs: 300 })));
    const second = await stack.drainQueue("syncWorker", { batchSize: 10 });

    // Assess: invocations overlapped, never more than the maximum; a container runs one
    // invocation at a time (so no more were started than ran at once), and the second drain
    // started none: its batches ran in the first one's warm containers.
    expect(first.deleted).toBe(150);
    expect(first.peakConcurrency).toBeGreaterThan(1);
    expect(first.peakConcurrency).toBeLessThanOrEqual(10);
    expect(first.containers).toBeLessThanOrEqual(first.peakConcurrency);
    expect(second.containers).toBe(0);
    const secondThreads = (await seen()).filter((l) => l.id.startsWith("w")).map((l) => l.thread);
    for (const thread of secondThreads) expect(threads).toContain(thread);
  });

  it("reports each invocation's cost: the most memory a container held, its thread's CPU", async () => {
    await send([{ id: "small" }]);
    const small = await stack.drainQueue("syncWorker");
    await send([{ id: "large", holdMb: 64 }]);
    const large = await stack.drainQueue("syncWorker");

    // The 64 MiB buffer is external memory of the container's isolate while the handler runs.
    expect(large.peakMemoryBytes - small.peakMemoryBytes).toBeGreaterThanOrEqual(60 * 1048576);
    for (const stats of [small, large]) {
      expect(stats.handlerCpuMs).toBeGreaterThanOrEqual(0);
      expect(stats.longestMs).toBeGreaterThan(0);
      expect(stats.longestMs).toBeLessThanOrEqual(stats.handlerMs);
    }
  });

  it("keeps the whole batch when the handler throws", async () => {
    // Batches of 10 (the deployed mapping takes 1): the harness's batch semantics under test.
    await send([{ id: "a" }, { id: "b", throwUntil: 1 }, { id: "c" }]);
    const stats = await stack.drainQueue("syncWorker", { batchSize: 10 });
    expect(stats.errors).toEqual(["Error: fixture throws for b"]);
    const starts = (await seen()).filter((l) => l.phase === "start");
    for (const id of ["a", "b", "c"]) {
      expect(starts.filter((l) => l.id === id).map((l) => l.receiveCount)).toEqual([1, 2]);
    }
  });

  it("moves a message that keeps failing to the dead-letter queue after maxReceiveCount tries", async () => {
    await send([{ id: "poison", failUntil: 1000 }, { id: "fine" }]);
    const stats = await stack.drainQueue("syncWorker");
    const tries = (await seen()).filter((l) => l.id === "poison" && l.phase === "start");
    // Exactly JOB_MAX_RECEIVES deliveries: the harness disabled moto's own (Docker) attempt.
    expect(tries.map((l) => l.receiveCount)).toEqual([1, 2, 3, 4, 5]);
    expect(stack.functions.syncWorker?.environment.JOB_MAX_RECEIVES).toBe("5");
    expect(stats.deleted).toBe(1);
    expect(await queueCount(stack.outputs.SyncJobsDeadLetterQueueUrl)).toBe(1);
    expect(await queueCount(stack.outputs.SyncJobsQueueUrl)).toBe(0);
  });

  it("duplicateEveryMessage delivers each message twice, concurrently, before deleting", async () => {
    await send([{ id: "d1", sleepMs: 200 }, { id: "d2" }, { id: "d3" }]);
    const stats = await stack.drainQueue("syncWorker", {
      duplicateEveryMessage: true,
      batchSize: 10,
    });
    const ends = (await seen()).filter((l) => l.phase === "end");
    for (const id of ["d1", "d2", "d3"]) {
      const copies = ends.filter((l) => l.id === id);
      expect(copies).toHaveLength(2);
      expect(copies[0]?.receiptHandle).not.toBe(copies[1]?.receiptHandle);
      expect(copies[0]?.thread).not.toBe(copies[1]?.thread);
    }
    expect(stats.invocations).toBe(2);
    expect(stats.messages).toBe(6);
    expect(stats.deleted).toBe(3);
    expect(await queueCount(stack.outputs.SyncJobsQueueUrl)).toBe(0);
  });

  it("killAfter kills the worker mid-batch: nothing after the kill runs, the batch comes back", async () => {
    await send([{ id: "k1", sleepMs: 1000 }, { id: "k2" }]);
    const stats = await stack.drainQueue("syncWorker", { killAfter: { ms: 200 }, batchSize: 10 });
    const lines = await seen();
    expect(stats.kills).toBe(1);
    expect(stats.invocations).toBe(2);
    for (const id of ["k1", "k2"]) {
      expect(lines.filter((l) => l.id === id).map((l) => `${l.phase}${l.receiveCount}`)).toEqual([
        "start1",
        "start2",
        "end2",
      ]);
    }
    expect(await queueCount(stack.outputs.SyncJobsQueueUrl)).toBe(0);
  });
});

describe("the AWS request counter", () => {
  it("passes held GETs on and counts the most in flight", async () => {
    // The target answers no GET until three have arrived, so three are in flight at once.
    const waiting: (() => void)[] = [];
    const target = createServer((_request, answer) => {
      waiting.push(() => answer.end("ok"));
      if (waiting.length === 3) for (const release of waiting) release();
    });
    await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
    const counter = await startAwsRequestCounter(
      `http://127.0.0.1:${(target.address() as AddressInfo).port}`,
      { getDelayMs: 20 },
    );
    try {
      const read = (key: string) =>
        new Promise<string>((resolve, reject) =>
          get(`${counter.endpoint}/${key}`, (answer) => {
            let body = "";
            answer.on("data", (chunk: Buffer) => {
              body += chunk;
            });
            answer.on("end", () => resolve(body));
          }).on("error", reject),
        );
      expect(await Promise.all(["a", "b", "c"].map(read))).toEqual(["ok", "ok", "ok"]);
      const counts = counter.take();
      expect(counts.mostGetsInFlight).toBe(3);
      expect(counts.other["unknown:GET"]).toBe(3);
    } finally {
      await counter.close();
      target.close();
    }
  });
});
