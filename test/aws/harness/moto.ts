// moto_server on loopback: the AWS services the cloud runtime uses (SQS, S3, DynamoDB, Secrets
// Manager, Lambda, CloudFormation, IAM...), emulated. One server per call, on a free port.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CreateTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";

export const DEFAULT_REGION = "eu-west-1";

export interface Moto {
  /** e.g. http://127.0.0.1:41234 */
  readonly endpoint: string;
  readonly region: string;
  /** The server's process id (a benchmark reads its CPU time). */
  readonly pid: number | undefined;
  /** Stops the server (and with it all its state). Idempotent. */
  stop(): Promise<void>;
}

const HOW_TO_GET =
  "moto_server is required for the AWS tests and was not found on PATH. " +
  "Install it with: pip install 'moto[server]' (Python 3.9+), then check `moto_server --help`.";

/**
 * `moto_server` with the changes of moto_server.py beside this file: requests served one at a time
 * (moto's DynamoDB transactions are not atomic across threads), TransactWriteItems saving only the
 * items it names (not a copy of the whole table, so a commit's cost does not grow with the
 * table), and a standard queue's receive order following SQS fair queues (MessageGroupId).
 */
const MOTO_SERVER = fileURLToPath(new URL("./moto_server.py", import.meta.url));

function onPath(command: string): boolean {
  return (process.env.PATH ?? "")
    .split(delimiter)
    .some((dir) => dir !== "" && existsSync(join(dir, command)));
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address
          ? resolvePort(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

async function answers(endpoint: string): Promise<boolean> {
  try {
    const res = await fetch(`${endpoint}/moto-api/`, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * Starts `moto_server` on 127.0.0.1 and resolves once it answers. Sets nothing global: pass
 * `awsEnv(moto.endpoint)` or `awsClientConfig(moto.endpoint)` to whatever talks to it.
 * Throws (never skips) when moto_server is not installed.
 */
export async function startMoto(
  options: { region?: string; timeoutMs?: number } = {},
): Promise<Moto> {
  if (!onPath("moto_server")) throw new Error(HOW_TO_GET);
  const region = options.region ?? DEFAULT_REGION;
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const endpoint = `http://127.0.0.1:${port}`;
    const child = spawn("python3", [MOTO_SERVER, "-H", "127.0.0.1", "-p", String(port)], {
      stdio: ["ignore", "ignore", "pipe"],
      // Its own process group would outlive us on a crash; keep it a plain child.
      env: { ...process.env, PYTHONUNBUFFERED: "1" },
    });
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const exited = new Promise<number | null>((resolveExit) => {
      child.once("exit", (code) => resolveExit(code));
      child.once("error", () => resolveExit(-1));
    });
    let dead = false;
    void exited.then(() => {
      dead = true;
    });
    while (!dead && Date.now() < deadline) {
      if (await answers(endpoint)) return running(child, endpoint, region, exited);
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill("SIGKILL");
    // Lost the race for the port to another process: try another one.
    if (dead && attempt < 3 && /in use/i.test(stderr)) continue;
    throw new Error(
      `moto_server did not answer on ${endpoint} ${dead ? "(it exited)" : "in time"}: ${stderr.trim()}`,
    );
  }
}

function running(
  child: ChildProcess,
  endpoint: string,
  region: string,
  exited: Promise<unknown>,
): Moto {
  // A test that forgets stop() must not leave the server behind.
  const onExit = () => child.kill("SIGKILL");
  process.once("exit", onExit);
  let stopping: Promise<void> | undefined;
  return {
    endpoint,
    region,
    pid: child.pid,
    stop() {
      stopping ??= (async () => {
        process.off("exit", onExit);
        if (child.exitCode === null && child.signalCode === null) {
          child.kill("SIGTERM");
          const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
          await exited;
          clearTimeout(timer);
        }
      })();
      return stopping;
    },
  };
}

/**
 * The environment an AWS SDK v3 client (or the CLI's `cloud` commands) needs to talk to the
 * emulator: endpoint, region and fake credentials (moto accepts any).
 */
export function awsEnv(endpoint: string, region = DEFAULT_REGION): Record<string, string> {
  return {
    AWS_ENDPOINT_URL: endpoint,
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    AWS_ACCESS_KEY_ID: "testing",
    AWS_SECRET_ACCESS_KEY: "testing",
  };
}

/**
 * Constructor options for any AWS SDK v3 client talking to the emulator, e.g.
 * `new DynamoDBClient(awsClientConfig(moto.endpoint))`. For SQS add
 * `useQueueUrlAsEndpoint: false`: queue URLs of CloudFormation-made queues name the host
 * sqs.<region>.amazonaws.com, and the SQS client otherwise sends requests there.
 */
export function awsClientConfig(endpoint: string, region = DEFAULT_REGION) {
  return {
    endpoint,
    region,
    credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
  };
}

/**
 * A table keyed as the runs table is (infra/storage.yml: `pk` and `sk`, strings), billed per
 * request, for a test or a bench of DynamoDB's own behaviour on the emulator.
 */
export async function createPkSkTable(dynamo: DynamoDBClient, table: string): Promise<void> {
  await dynamo.send(
    new CreateTableCommand({
      TableName: table,
      BillingMode: "PAY_PER_REQUEST",
      AttributeDefinitions: [
        { AttributeName: "pk", AttributeType: "S" },
        { AttributeName: "sk", AttributeType: "S" },
      ],
      KeySchema: [
        { AttributeName: "pk", KeyType: "HASH" },
        { AttributeName: "sk", KeyType: "RANGE" },
      ],
    }),
  );
}

/**
 * A moto_server with one table keyed as the runs table, and this process's AWS settings pointed
 * at it: for tests of lib/cloud/aws modules that use the shared clients.
 */
export async function startMotoWithPkSkTable(table: string): Promise<Moto> {
  const moto = await startMoto();
  Object.assign(process.env, awsEnv(moto.endpoint));
  const dynamo = new DynamoDBClient(awsClientConfig(moto.endpoint));
  await createPkSkTable(dynamo, table);
  dynamo.destroy();
  return moto;
}
