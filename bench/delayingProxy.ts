/**
 * An HTTP proxy on 127.0.0.1 in front of moto_server that holds each GET for `getDelayMs` before
 * passing it on: S3's time to first byte (20-50 ms) on loopback, where moto answers in a few
 * ms. A function reaches it through the SDK's per-service endpoints (`AWS_ENDPOINT_URL_S3`,
 * `proxyEndpoints`), so only S3 (the one service that GETs) is slowed. It counts the GETs it
 * passed on and the most it held at once, and every request by service and operation (from the
 * request's signature and target, whatever code sent it): DynamoDB's written items and the
 * writes per partition key, SQS's billed requests. Counts, not times, so they hold on a loaded
 * machine.
 */
import { Agent, createServer, type IncomingMessage, request } from "node:http";
import type { AddressInfo } from "node:net";

export interface DelayingProxy {
  readonly endpoint: string;
  /** GETs since the last call, and the most in flight at once (from arrival to answered). */
  takeGets(): { gets: number; mostInFlight: number };
  /** Every request since the last call, counted (see RequestCounts). */
  takeCounts(): RequestCounts;
  close(): Promise<void>;
}

export interface RequestCounts {
  /** Requests by `service:Operation`, e.g. `s3:PutObject`, `dynamodb:TransactWriteItems`. */
  byOperation: Record<string, number>;
  /** Items written (each entry of a transaction or a batch, each put, update or delete). */
  dynamoItemsWritten: number;
  /** Of which in transactions (DynamoDB bills each such item twice). */
  dynamoTransactionItems: number;
  /**
   * The partition key written most, and the most writes it took in one second. The key is
   * `table/value` of the table's hash key (`hashKeys`).
   */
  hottestKey: { key: string; writes: number; mostInOneSecond: number } | undefined;
  /** SQS requests as billed: each 64 KiB of a request's payload is one. */
  sqsBilledRequests: number;
}

/** The services whose endpoint variables proxyEndpoints sets (the SDK's service ids, upper case). */
const PROXIED_SERVICES = ["S3", "DYNAMODB", "SQS", "SECRETS_MANAGER"] as const;

/** The per-service endpoint variables that send a function's S3, DynamoDB, SQS and Secrets Manager requests through the proxy. */
export function proxyEndpoints(endpoint: string): Record<string, string> {
  return Object.fromEntries(PROXIED_SERVICES.map((s) => [`AWS_ENDPOINT_URL_${s}`, endpoint]));
}

const SQS_BILLING_CHUNK = 64 * 1024;

export async function startDelayingProxy(
  target: string,
  options: {
    getDelayMs: number;
    /** Each DynamoDB table's hash key attribute, by table name: for the writes per key. */
    hashKeys?: Readonly<Record<string, string>>;
  },
): Promise<DelayingProxy> {
  const to = new URL(target);
  const agent = new Agent({ keepAlive: true });
  let gets = 0;
  let inFlight = 0;
  let mostInFlight = 0;
  let counts = emptyCounts();
  let keys = new Map<string, KeyWrites>();
  const hashKeys = options.hashKeys ?? {};

  const count = (incoming: IncomingMessage, body: Buffer | undefined) => {
    const service = serviceOf(incoming);
    const target = String(incoming.headers["x-amz-target"] ?? "");
    const operation =
      service === "s3" ? s3Operation(incoming) : target.slice(target.lastIndexOf(".") + 1);
    const name = `${service}:${operation || incoming.method}`;
    counts.byOperation[name] = (counts.byOperation[name] ?? 0) + 1;
    if (service === "sqs") {
      counts.sqsBilledRequests += Math.max(1, Math.ceil((body?.length ?? 0) / SQS_BILLING_CHUNK));
    }
    if (service === "dynamodb" && body) {
      for (const { table, item, transaction } of writtenItems(operation, body)) {
        counts.dynamoItemsWritten++;
        if (transaction) counts.dynamoTransactionItems++;
        const attribute = hashKeys[table];
        const value = attribute ? item?.[attribute] : undefined;
        if (value !== undefined) noteWrite(keys, `${table}/${Object.values(value)[0]}`);
      }
    }
  };

  const server = createServer((incoming, answer) => {
    const method = incoming.method ?? "GET";
    if (method === "GET") {
      gets++;
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      answer.on("close", () => inFlight--);
    }
    const pass = (body: Buffer | undefined) => {
      const outgoing = request(
        {
          host: to.hostname,
          port: to.port,
          method,
          path: incoming.url,
          headers: incoming.headers,
          agent,
        },
        (upstream) => {
          answer.writeHead(upstream.statusCode ?? 502, upstream.headers);
          upstream.pipe(answer);
        },
      );
      outgoing.on("error", (error) => answer.destroy(error));
      if (body) outgoing.end(body);
      else incoming.pipe(outgoing);
    };
    // JSON-protocol requests (DynamoDB, SQS, Secrets Manager) are small: read whole, to count.
    if (incoming.headers["x-amz-target"]) {
      const chunks: Buffer[] = [];
      incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
      incoming.on("end", () => {
        const body = Buffer.concat(chunks);
        count(incoming, body);
        pass(body);
      });
      return;
    }
    count(incoming, undefined);
    if (method === "GET") setTimeout(() => pass(undefined), options.getDelayMs);
    else pass(undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    takeGets() {
      const taken = { gets, mostInFlight };
      gets = 0;
      mostInFlight = inFlight;
      return taken;
    },
    takeCounts() {
      let hottest: RequestCounts["hottestKey"];
      for (const [key, w] of keys) {
        if (!hottest || w.writes > hottest.writes) {
          hottest = { key, writes: w.writes, mostInOneSecond: w.mostInOneSecond };
        }
      }
      const taken = { ...counts, hottestKey: hottest };
      counts = emptyCounts();
      keys = new Map();
      return taken;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

function emptyCounts(): RequestCounts {
  return {
    byOperation: {},
    dynamoItemsWritten: 0,
    dynamoTransactionItems: 0,
    hottestKey: undefined,
    sqsBilledRequests: 0,
  };
}

interface KeyWrites {
  writes: number;
  second: number;
  inSecond: number;
  mostInOneSecond: number;
}

function noteWrite(keys: Map<string, KeyWrites>, key: string) {
  const second = Math.floor(performance.now() / 1000);
  const w = keys.get(key) ?? { writes: 0, second, inSecond: 0, mostInOneSecond: 0 };
  w.writes++;
  if (w.second !== second) {
    w.second = second;
    w.inSecond = 0;
  }
  w.inSecond++;
  w.mostInOneSecond = Math.max(w.mostInOneSecond, w.inSecond);
  keys.set(key, w);
}

/** The service a request was signed for (SigV4's credential scope: key/date/region/service/aws4_request). */
function serviceOf(incoming: IncomingMessage): string {
  const auth = String(incoming.headers.authorization ?? "");
  return /Credential=[^/]+\/[^/]+\/[^/]+\/([^/]+)\//.exec(auth)?.[1] ?? "unsigned";
}

function s3Operation(incoming: IncomingMessage): string {
  const url = new URL(incoming.url ?? "/", "http://proxy");
  const objectKey = url.pathname.split("/").filter(Boolean).length > 1;
  switch (incoming.method) {
    case "GET":
      return objectKey ? "GetObject" : "ListObjects";
    case "PUT":
      return objectKey ? "PutObject" : "PutBucket";
    case "HEAD":
      return objectKey ? "HeadObject" : "HeadBucket";
    case "DELETE":
      return "DeleteObject";
    case "POST":
      return url.searchParams.has("delete") ? "DeleteObjects" : "PostObject";
    default:
      return incoming.method ?? "";
  }
}

type AttributeMap = Record<string, Record<string, unknown>>;
interface Written {
  table: string;
  item: AttributeMap | undefined;
  transaction: boolean;
}

/** The items a DynamoDB request writes, with their key (or whole item) where it names one. */
function writtenItems(operation: string, body: Buffer): Written[] {
  let request: Record<string, unknown>;
  try {
    request = JSON.parse(body.toString("utf8")) as Record<string, unknown>;
  } catch {
    return [];
  }
  const table = String(request.TableName ?? "");
  switch (operation) {
    case "PutItem":
      return [{ table, item: request.Item as AttributeMap, transaction: false }];
    case "UpdateItem":
    case "DeleteItem":
      return [{ table, item: request.Key as AttributeMap, transaction: false }];
    case "BatchWriteItem":
      return Object.entries(
        (request.RequestItems ?? {}) as Record<
          string,
          { PutRequest?: { Item: AttributeMap }; DeleteRequest?: { Key: AttributeMap } }[]
        >,
      ).flatMap(([name, entries]) =>
        entries.map((e) => ({
          table: name,
          item: e.PutRequest?.Item ?? e.DeleteRequest?.Key,
          transaction: false,
        })),
      );
    case "TransactWriteItems":
      return ((request.TransactItems ?? []) as Record<string, Record<string, unknown>>[]).flatMap(
        (entry) =>
          Object.values(entry).map((op) => ({
            table: String(op.TableName ?? ""),
            item: (op.Item ?? op.Key) as AttributeMap | undefined,
            transaction: true,
          })),
      );
    default:
      return [];
  }
}
