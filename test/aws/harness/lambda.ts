// Runs packaged Lambda handlers for the AWS tests.
//
// moto cannot run Lambda code: it would need a Docker engine, and there is none here. So the
// harness runs each function's packaged bundle itself, in this process, the way the Node.js
// runtime does: the zip that was deployed is unpacked once, and each "container" is a worker
// thread that imports the handler file named by the deployed Handler and runs one invocation at
// a time. Warm containers are reused (module state survives between invocations, as on Lambda);
// concurrent invocations get more containers (cold starts).
//
// A container's process.env is its own copy: the deployed function's Environment.Variables,
// the emulator's endpoint and fake credentials, and the variables Lambda itself sets. So a
// handler may read its environment at import or at call time; the test process's environment
// is neither read nor changed. Not set on purpose: AWS_EXECUTION_ENV, LAMBDA_TASK_ROOT and the
// X-Ray variables, so Powertools Tracer sees no Lambda sandbox and stays off (there is no X-Ray
// daemon); Logger and Metrics work as deployed (they write to the container's stdout, which the
// harness collects: `Stack.logs`, or set HARNESS_LAMBDA_LOGS=1 to echo them to stderr).
//
// Like Lambda, an invocation that outlives the deployed Timeout is killed ("Task timed out"), and
// a crash (an uncaught exception or unhandled rejection) fails the invocation; either way the
// container is discarded. `killAfterMs` kills one on purpose: no code of the handler runs after.
import { randomBytes, randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { access, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, sep } from "node:path";
import { pipeline } from "node:stream/promises";
import { Worker } from "node:worker_threads";
import yauzl from "yauzl";

/** What a deployed function looks like to the harness (from GetFunctionConfiguration). */
export interface FunctionConfig {
  key: string;
  name: string;
  arn: string;
  handler: string;
  runtime: string;
  timeoutSeconds: number;
  memoryMb: number;
  environment: Record<string, string>;
}

/** Overrides of the Lambda context of one invocation. */
export interface InvokeOptions {
  awsRequestId?: string;
  /** Kill the container after this many ms (before the handler settles): see LambdaKilledError. */
  killAfterMs?: number;
  clientContext?: unknown;
  identity?: unknown;
}

/** What one invocation cost, as its container measured it. */
export interface InvocationCost {
  /** Wall time of the handler, ms. */
  ms: number;
  /** CPU time of the container's thread during it, ms (NaN off Linux; libuv's thread pool not counted). */
  cpuMs: number;
  /** The most V8 heap in use plus external memory seen during it (sampled every 20 ms), bytes. */
  peakMemoryBytes: number;
}

export interface InvocationResult<T = unknown> extends InvocationCost {
  result: T;
  awsRequestId: string;
}

/** The handler threw, crashed, or timed out; errorType is Lambda's (e.g. Sandbox.Timedout). */
export class LambdaInvocationError extends Error {
  constructor(
    readonly functionKey: string,
    readonly errorType: string,
    errorMessage: string,
    readonly remoteStack?: string,
  ) {
    super(errorMessage);
    this.name = "LambdaInvocationError";
    if (remoteStack) this.stack = `${this.name} [${functionKey}] ${errorType}: ${remoteStack}`;
  }
}

/** The harness killed the container on purpose (`killAfterMs`). */
export class LambdaKilledError extends LambdaInvocationError {
  constructor(functionKey: string, ms: number) {
    super(functionKey, "Harness.Killed", `killed after ${ms} ms`);
    this.name = "LambdaKilledError";
  }
}

export interface LogLine {
  functionKey: string;
  stream: "stdout" | "stderr";
  line: string;
}

/** Unpacks a zip into dir (entries must stay inside it). */
export async function unzip(zipFile: string, dir: string): Promise<void> {
  const zip = await yauzl.openPromise(zipFile);
  try {
    for await (const entry of zip.eachEntry()) {
      const target = join(dir, entry.fileName);
      if (!target.startsWith(dir + sep)) throw new Error(`zip entry escapes: ${entry.fileName}`);
      if (entry.fileName.endsWith("/")) {
        await mkdir(target, { recursive: true });
        continue;
      }
      await mkdir(dirname(target), { recursive: true });
      await pipeline(await zip.openReadStreamPromise(entry), createWriteStream(target));
    }
  } finally {
    zip.close();
  }
}

/** The file and export a Handler such as `handler.handler` or `src/app.main` names. */
async function resolveHandler(codeDir: string, handler: string) {
  const dot = handler.lastIndexOf(".");
  if (dot <= 0) throw new Error(`malformed Handler ${handler}`);
  const base = join(codeDir, handler.slice(0, dot));
  for (const ext of [".js", ".mjs", ".cjs"]) {
    const file = base + ext;
    if (
      await access(file).then(
        () => true,
        () => false,
      )
    ) {
      return { file, exportName: handler.slice(dot + 1) };
    }
  }
  throw new Error(`Handler ${handler}: no ${base}.{js,mjs,cjs} in the package`);
}

interface Pending {
  resolve(value: { payload: string } & InvocationCost): void;
  reject(error: Error): void;
}

class Container {
  readonly worker: Worker;
  readonly ready: Promise<void>;
  private pending: Pending | undefined;
  dead = false;

  constructor(
    fn: FunctionConfig,
    entry: { file: string; exportName: string },
    readonly env: Record<string, string>,
    onLine: (stream: "stdout" | "stderr", line: string) => void,
  ) {
    this.worker = new Worker(new URL("./lambda-container.mjs", import.meta.url), {
      workerData: {
        ...entry,
        sourceMaps: (env.NODE_OPTIONS ?? "").includes("--enable-source-maps"),
      },
      env,
      execArgv: [],
      stdout: true,
      stderr: true,
      resourceLimits: { maxOldGenerationSizeMb: fn.memoryMb },
    });
    for (const stream of ["stdout", "stderr"] as const) {
      let rest = "";
      this.worker[stream].setEncoding("utf8");
      this.worker[stream].on("data", (chunk: string) => {
        const lines = (rest + chunk).split("\n");
        rest = lines.pop() ?? "";
        for (const line of lines) onLine(stream, line);
      });
      this.worker[stream].on("end", () => rest && onLine(stream, rest));
    }
    this.ready = new Promise((resolveReady, rejectReady) => {
      this.worker.on("message", (message) => {
        if (message.type === "ready") resolveReady();
        else if (message.type === "init-error") {
          const e = message.error;
          const error = new LambdaInvocationError(fn.key, e.errorType, e.errorMessage, e.stack);
          rejectReady(error);
          this.fail(error);
        } else if (message.type === "result") {
          const pending = this.pending;
          this.pending = undefined;
          if (!pending) return;
          if (message.ok) {
            const { payload, ms, cpuMs, peakMemoryBytes } = message;
            pending.resolve({ payload, ms, cpuMs, peakMemoryBytes });
          } else {
            const e = message.error;
            pending.reject(new LambdaInvocationError(fn.key, e.errorType, e.errorMessage, e.stack));
          }
        }
      });
      this.worker.on("error", (error) => {
        const failure = new LambdaInvocationError(
          fn.key,
          error.name === "ERR_WORKER_OUT_OF_MEMORY" ? "Runtime.OutOfMemory" : "Runtime.ExitError",
          error.message,
          error.stack,
        );
        rejectReady(failure);
        this.fail(failure);
      });
      this.worker.on("exit", (code) => {
        const failure = new LambdaInvocationError(
          fn.key,
          "Runtime.ExitError",
          `the runtime exited with code ${code}`,
        );
        rejectReady(failure);
        this.fail(failure);
      });
    });
    this.ready.catch(() => {});
  }

  private fail(error: Error) {
    this.dead = true;
    const pending = this.pending;
    this.pending = undefined;
    pending?.reject(error);
  }

  async invoke(message: unknown): Promise<{ payload: string } & InvocationCost> {
    await this.ready;
    if (this.dead) throw new Error("container is dead");
    this.worker.ref();
    try {
      return await new Promise((resolveResult, reject) => {
        this.pending = { resolve: resolveResult, reject };
        this.worker.postMessage(message);
      });
    } finally {
      this.worker.unref();
    }
  }

  /** Terminates the worker; its pending invocation (if any) fails with `error`. */
  async kill(error: Error) {
    this.fail(error);
    await this.worker.terminate();
  }
}

/** Lambda's own environment variables of a function (those the harness can honestly set). */
function lambdaEnvironment(fn: FunctionConfig, region: string): Record<string, string> {
  return {
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    AWS_LAMBDA_FUNCTION_NAME: fn.name,
    AWS_LAMBDA_FUNCTION_VERSION: "$LATEST",
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMb),
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.name}`,
    _HANDLER: fn.handler,
    LANG: "en_US.UTF-8",
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    // Nothing from the developer's ~/.aws leaks into a handler.
    AWS_CONFIG_FILE: "/dev/null",
    AWS_SHARED_CREDENTIALS_FILE: "/dev/null",
  };
}

/** The runtime of one deployed function: its unpacked code and its containers. */
export class FunctionRuntime {
  private idle: Container[] = [];
  private all = new Set<Container>();
  private codeDir: string | undefined;
  private entry: Promise<{ file: string; exportName: string }> | undefined;
  /** Containers started so far (cold starts); a warm one is reused when idle, as on Lambda. */
  containersStarted = 0;

  constructor(
    private fn: FunctionConfig,
    private zipFile: string,
    private readonly region: string,
    private readonly awsEnvironment: Record<string, string>,
    private readonly onLine: (line: LogLine) => void,
  ) {}

  get config(): FunctionConfig {
    return this.fn;
  }

  /** New configuration or code: warm containers are discarded, the next invocation is cold. */
  async reconfigure(fn: FunctionConfig, zipFile?: string) {
    await this.close();
    this.fn = fn;
    if (zipFile) this.zipFile = zipFile;
  }

  private unpacked() {
    this.entry ??= (async () => {
      this.codeDir = await mkdtemp(join(tmpdir(), `lambda-${this.fn.key}-`));
      await unzip(this.zipFile, this.codeDir);
      return resolveHandler(this.codeDir, this.fn.handler);
    })();
    return this.entry;
  }

  private async container(): Promise<Container> {
    for (;;) {
      const warm = this.idle.pop();
      if (!warm) break;
      if (!warm.dead) return warm;
    }
    const env = {
      ...this.fn.environment,
      ...lambdaEnvironment(this.fn, this.region),
      ...this.awsEnvironment,
      AWS_LAMBDA_LOG_STREAM_NAME: `${new Date().toISOString().slice(0, 10).replaceAll("-", "/")}/[$LATEST]${randomBytes(16).toString("hex")}`,
    };
    const key = this.fn.key;
    const container = new Container(this.fn, await this.unpacked(), env, (stream, line) =>
      this.onLine({ functionKey: key, stream, line }),
    );
    this.all.add(container);
    this.containersStarted++;
    return container;
  }

  async invoke<T>(event: unknown, options: InvokeOptions = {}): Promise<InvocationResult<T>> {
    const fn = this.fn;
    const container = await this.container();
    const awsRequestId = options.awsRequestId ?? randomUUID();
    const timeoutMs = fn.timeoutSeconds * 1000;
    const timers: NodeJS.Timeout[] = [];
    try {
      await container.ready;
      const deadline = Date.now() + timeoutMs;
      const message = {
        type: "invoke",
        id: awsRequestId,
        event,
        context: {
          functionName: fn.name,
          functionVersion: "$LATEST",
          invokedFunctionArn: fn.arn,
          memoryLimitInMB: String(fn.memoryMb),
          awsRequestId,
          logGroupName: `/aws/lambda/${fn.name}`,
          logStreamName: container.env.AWS_LAMBDA_LOG_STREAM_NAME,
          deadline,
          clientContext: options.clientContext,
          identity: options.identity,
        },
      };
      const running = container.invoke(message);
      timers.push(
        setTimeout(() => {
          void container.kill(
            new LambdaInvocationError(
              fn.key,
              "Sandbox.Timedout",
              `Task timed out after ${fn.timeoutSeconds.toFixed(2)} seconds`,
            ),
          );
        }, timeoutMs),
      );
      if (options.killAfterMs !== undefined) {
        const ms = options.killAfterMs;
        timers.push(setTimeout(() => void container.kill(new LambdaKilledError(fn.key, ms)), ms));
      }
      const { payload, ...cost } = await running;
      this.idle.push(container);
      return { result: JSON.parse(payload) as T, ...cost, awsRequestId };
    } catch (error) {
      // A failed invocation leaves a usable container unless it crashed or was killed.
      if (!container.dead) this.idle.push(container);
      else void container.worker.terminate();
      throw error;
    } finally {
      for (const timer of timers) clearTimeout(timer);
    }
  }

  async close() {
    const containers = [...this.all];
    this.all.clear();
    this.idle = [];
    await Promise.all(containers.map((c) => c.kill(new Error("closed"))));
    if (this.codeDir) await rm(this.codeDir, { recursive: true, force: true });
    this.codeDir = undefined;
    this.entry = undefined;
  }
}
