// One Lambda execution environment ("container") for the AWS tests: a worker thread that imports
// a packaged handler once (cold start) and then runs one invocation at a time, as the Node.js
// runtime does. Its process.env is its own (the function's deployed environment), and the
// harness can terminate it mid-invocation like Lambda kills a timed-out or crashed sandbox.
// Plain JavaScript: a worker runs outside vitest's transforms.

import { pathToFileURL } from "node:url";
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

if (handler) {
  parentPort.on("message", async (message) => {
    if (message.type !== "invoke") return;
    const started = performance.now();
    try {
      const result = await call(message.event, contextFor(message.context));
      // Lambda answers with the JSON of the result (undefined becomes null).
      const payload = JSON.stringify(result === undefined ? null : result);
      parentPort.postMessage({
        type: "result",
        id: message.id,
        ok: true,
        payload,
        ms: performance.now() - started,
      });
    } catch (error) {
      parentPort.postMessage({
        type: "result",
        id: message.id,
        ok: false,
        error: describe(error),
        ms: performance.now() - started,
      });
    }
  });
  parentPort.postMessage({ type: "ready" });
}
