// One Lambda execution environment ("container") for the AWS tests: a worker thread that imports
// a packaged handler once (cold start) and then runs one invocation at a time, as the Node.js
// runtime does. Its process.env is its own (the function's deployed environment), and the
// harness can terminate it mid-invocation like Lambda kills a timed-out or crashed sandbox.
// Plain JavaScript: a worker runs outside vitest's transforms.

import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { getHeapStatistics } from "node:v8";
import { parentPort, workerData } from "node:worker_threads";

const { file, exportName, sourceMaps } = workerData;
if (sourceMaps) process.setSourceMapsEnabled(true);

function describe(error) {
  if (error instanceof Error) {
    return { errorType: error.name, errorMessage: error.message, stack: error.stack };
  }
  return { errorType: "Error", errorMessage: String(error) };
}

let handler;
try {
  const module = await import(pathToFileURL(file).href);
  handler = module[exportName];
  if (typeof handler !== "function") {
    throw Object.assign(new Error(`${file} does not export a function named ${exportName}`), {
      name: "Runtime.HandlerNotFound",
    });
  }
} catch (error) {
  const described = describe(error);
  if (described.errorType === "Error") described.errorType = "Runtime.ImportModuleError";
  parentPort.postMessage({ type: "init-error", error: described });
  // Stay alive: the harness terminates us.
}

function contextFor(c) {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: c.functionName,
    functionVersion: c.functionVersion,
    invokedFunctionArn: c.invokedFunctionArn,
    memoryLimitInMB: c.memoryLimitInMB,
    awsRequestId: c.awsRequestId,
    logGroupName: c.logGroupName,
    logStreamName: c.logStreamName,
    ...(c.clientContext ? { clientContext: c.clientContext } : {}),
    ...(c.identity ? { identity: c.identity } : {}),
    getRemainingTimeInMillis: () => Math.max(0, c.deadline - Date.now()),
    done() {
      throw new Error("context.done is not supported: return a value or a promise");
    },
    fail() {
      throw new Error("context.fail is not supported: throw an error");
    },
    succeed() {
      throw new Error("context.succeed is not supported: return a value");
    },
  };
}

function call(event, context) {
  return new Promise((resolve, reject) => {
    // The Node.js 22 runtime still accepts a callback-style handler.
    const callback = (error, result) => (error ? reject(error) : resolve(result));
    try {
      const returned = handler(event, context, callback);
      if (returned && typeof returned.then === "function") returned.then(resolve, reject);
      else if (handler.length < 3) resolve(returned);
    } catch (error) {
      reject(error);
    }
  });
}

/**
 * CPU seconds of this thread (Linux: /proc/thread-self/stat, utime and stime in clock ticks of
 * 10 ms), NaN elsewhere. Work a handler hands to libuv's thread pool (zlib, fs) is not in it.
 */
function threadCpuMs() {
  try {
    const stat = readFileSync("/proc/thread-self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/** This container's memory as its isolate holds it: the V8 heap in use and external memory (buffers). */
function memoryBytes() {
  const heap = getHeapStatistics();
  return heap.used_heap_size + heap.external_memory;
}

/** What one invocation cost: wall ms, this thread's CPU ms, the most memory seen (sampled every 20 ms). */
function measure() {
  const started = performance.now();
  const cpu = threadCpuMs();
  let peak = memoryBytes();
  const sampler = setInterval(() => {
    peak = Math.max(peak, memoryBytes());
  }, 20);
  return () => {
    clearInterval(sampler);
    peak = Math.max(peak, memoryBytes());
    return { ms: performance.now() - started, cpuMs: threadCpuMs() - cpu, peakMemoryBytes: peak };
  };
}

if (handler) {
  parentPort.on("message", async (message) => {
    if (message.type !== "invoke") return;
    const done = measure();
    try {
      const result = await call(message.event, contextFor(message.context));
      // Lambda answers with the JSON of the result (undefined becomes null).
      const payload = JSON.stringify(result === undefined ? null : result);
      parentPort.postMessage({ type: "result", id: message.id, ok: true, payload, ...done() });
    } catch (error) {
      const failure = { ok: false, error: describe(error) };
      parentPort.postMessage({ type: "result", id: message.id, ...failure, ...done() });
    }
  });
  parentPort.postMessage({ type: "ready" });
}
