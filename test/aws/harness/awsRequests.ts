// Counts the AWS requests the functions make, by what AWS bills: an HTTP proxy on 127.0.0.1 in
// front of moto_server that the deployed functions reach through `AWS_ENDPOINT_URL` (deploy with
// `countAwsRequests`), so the test process's own requests (operator commands, the harness's queue
// polling) are not counted. It can hold each GET (S3's only: the other services POST) for
// `getDelayMs`, S3's time to first byte where moto answers in a few ms. Counts, not times, so
// they hold on a loaded machine; bench/awsPrices.ts turns them into a cost at list prices.
import { Agent, createServer, type IncomingMessage, request } from "node:http";
import type { AddressInfo } from "node:net";

/** What the functions asked of AWS since the last `take()`. */
export interface AwsRequestCounts {
  /** S3 requests by kind: PUT, GET, LIST, HEAD, DELETE, POST. */
  s3: Record<string, number>;
  /** The most GETs in flight at once (from arrival, held or not, to answered). */
  mostGetsInFlight: number;
  /** DynamoDB requests by operation (PutItem, TransactWriteItems, ...). */
  dynamodb: Record<string, number>;
  /**
   * DynamoDB on-demand units: a standard write is 1 unit a KB of its item, a transactional one 2;
   * a strongly consistent read 1 unit per 4 KB returned, a transactional one 2. Item sizes are
   * DynamoDB's rule applied to what the request names (an update: its key and new values, which
   * for this runtime's small items is within the same KB as the whole item).
   */
  dynamodbUnits: { write: number; read: number };
  /** Items written (a transaction or batch counts each of its items). */
  dynamodbItemsWritten: number;
  /**
   * Items written by what their partition key names (the `pk` before its `#`: `run`, `rate`,
   * `instance`...), and the most items written to one partition key (a table's `pk` value), in
   * all and in one second: where the writes land.
   */
  dynamodbWritesByKind: Record<string, number>;
  dynamodbMostWritesPerKey: number;
  dynamodbMostWritesPerKeyInOneSecond: number;
  /** SQS requests by action; `billed` counts each 64 KB of a request's payload as one. */
  sqs: Record<string, number>;
  /** Every other service's requests, `service:operation`. */
  other: Record<string, number>;
}

export interface AwsRequestCounter {
  readonly endpoint: string;
  /** The counts since the last call (or the start), and resets them. */
  take(): AwsRequestCounts;
  close(): Promise<void>;
}

const KB = 1024;
const SQS_BILLING_CHUNK = 64 * KB;

const emptyCounts = (): AwsRequestCounts => ({
  s3: {},
  mostGetsInFlight: 0,
  dynamodb: {},
  dynamodbUnits: { write: 0, read: 0 },
  dynamodbItemsWritten: 0,
  dynamodbWritesByKind: {},
  dynamodbMostWritesPerKey: 0,
  dynamodbMostWritesPerKeyInOneSecond: 0,
  sqs: {},
  other: {},
});

const add = (into: Record<string, number>, key: string, n = 1) => {
  into[key] = (into[key] ?? 0) + n;
};

/** The signing service of a SigV4 request: `.../<region>/<service>/aws4_request`. */
function serviceOf(incoming: IncomingMessage): string {
  const auth = incoming.headers.authorization ?? "";
  return /Credential=[^/]+\/[^/]+\/[^/]+\/([^/]+)\/aws4_request/.exec(auth)?.[1] ?? "unknown";
}

function s3Kind(method: string, url: string): string {
  const { pathname, searchParams } = new URL(url, "http://local");
  // Path style (`/<bucket>/<key>`): a GET of the bucket itself is a LIST.
  const isBucket = pathname.split("/").filter(Boolean).length <= 1;
  if (method === "GET" && (isBucket || searchParams.has("list-type"))) return "LIST";
  return method;
}

/** DynamoDB's size of an attribute value in its JSON wire form (names count where they appear). */
function valueBytes(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  const [[type, inner] = ["NULL", null]] = Object.entries(value as Record<string, unknown>);
  switch (type) {
    case "S":
      return Buffer.byteLength(String(inner));
    case "N":
      return Math.ceil(String(inner).replace(/^-/, "").length / 2) + 1;
    case "B":
      return Buffer.from(String(inner), "base64").length;
    case "BOOL":
    case "NULL":
      return 1;
    case "SS":
    case "NS":
    case "BS":
    case "L":
      return 3 + (inner as unknown[]).reduce<number>((n, v) => n + valueBytes(v), 0);
    case "M":
      return 3 + itemBytes(inner);
    default:
      return Buffer.byteLength(JSON.stringify(inner));
  }
}

function itemBytes(item: unknown): number {
  if (item === null || typeof item !== "object") return 0;
  return Object.entries(item as Record<string, unknown>).reduce(
    (n, [name, value]) => n + Buffer.byteLength(name) + valueBytes(value),
    0,
  );
}

/** The size of the item one write names: the put's item, or the update's key and new values. */
function writtenBytes(op: Record<string, unknown>): number {
  if (op.Item) return itemBytes(op.Item);
  return itemBytes(op.Key) + itemBytes(op.ExpressionAttributeValues);
}

const units = (bytes: number, per: number) => Math.max(1, Math.ceil(bytes / per));

/** The partition key a write names (`pk`, as this runtime's tables name it). */
function partitionKey(op: Record<string, unknown>): string {
  const key = (op.Key ?? op.Item ?? {}) as Record<string, { S?: string }>;
  return key.pk?.S ?? "";
}

/** One partition key's writes: in all, and in the current and busiest second. */
interface KeyWrites {
  writes: number;
  second: number;
  inSecond: number;
  mostInOneSecond: number;
}

function noteKeyWrite(counts: AwsRequestCounts, perKey: Map<string, KeyWrites>, key: string) {
  const second = Math.floor(performance.now() / 1000);
  const w = perKey.get(key) ?? { writes: 0, second, inSecond: 0, mostInOneSecond: 0 };
  w.writes++;
  if (w.second !== second) Object.assign(w, { second, inSecond: 0 });
  w.inSecond++;
  w.mostInOneSecond = Math.max(w.mostInOneSecond, w.inSecond);
  perKey.set(key, w);
  counts.dynamodbMostWritesPerKey = Math.max(counts.dynamodbMostWritesPerKey, w.writes);
  counts.dynamodbMostWritesPerKeyInOneSecond = Math.max(
    counts.dynamodbMostWritesPerKeyInOneSecond,
    w.mostInOneSecond,
  );
}

function countDynamo(
  counts: AwsRequestCounts,
  perKey: Map<string, KeyWrites>,
  operation: string,
  body: string,
  answer: string,
) {
  add(counts.dynamodb, operation);
  const request = JSON.parse(body || "{}") as Record<string, unknown>;
  const write = (op: Record<string, unknown>, factor: number, table: unknown) => {
    counts.dynamodbUnits.write += factor * units(writtenBytes(op), KB);
    counts.dynamodbItemsWritten++;
    const pk = partitionKey(op);
    add(counts.dynamodbWritesByKind, pk.split("#")[0] || "other");
    noteKeyWrite(counts, perKey, `${String(table ?? "")}/${pk}`);
  };
  switch (operation) {
    case "PutItem":
    case "UpdateItem":
    case "DeleteItem":
      write(request, 1, request.TableName);
      return;
    case "BatchWriteItem":
      for (const [table, requests] of Object.entries(request.RequestItems ?? {}) as [
        string,
        Record<string, Record<string, unknown>>[],
      ][]) {
        for (const r of requests) write(r.PutRequest ?? r.DeleteRequest ?? {}, 1, table);
      }
      return;
    case "TransactWriteItems":
      for (const item of (request.TransactItems ?? []) as Record<string, unknown>[]) {
        const op = (item.Put ?? item.Update ?? item.Delete ?? item.ConditionCheck ?? {}) as Record<
          string,
          unknown
        >;
        write(op, 2, op.TableName);
      }
      return;
    case "GetItem":
    case "Query":
    case "Scan":
    case "BatchGetItem":
      counts.dynamodbUnits.read += units(Buffer.byteLength(answer), 4 * KB);
      return;
    case "TransactGetItems":
      counts.dynamodbUnits.read += 2 * units(Buffer.byteLength(answer), 4 * KB);
      return;
  }
}

function countRequest(
  counts: AwsRequestCounts,
  perKey: Map<string, KeyWrites>,
  incoming: IncomingMessage,
  body: string,
  answer: string,
) {
  const service = serviceOf(incoming);
  const method = incoming.method ?? "GET";
  const target = String(incoming.headers["x-amz-target"] ?? "");
  const operation = target.slice(target.lastIndexOf(".") + 1);
  if (service === "s3") add(counts.s3, s3Kind(method, incoming.url ?? "/"));
  else if (service === "dynamodb") countDynamo(counts, perKey, operation, body, answer);
  else if (service === "sqs") {
    const action = operation || (new URLSearchParams(body).get("Action") ?? "unknown");
    add(counts.sqs, action);
    add(counts.sqs, "billed", units(Buffer.byteLength(body), SQS_BILLING_CHUNK));
  } else add(counts.other, `${service}:${operation || method}`);
}

export interface AwsRequestCounterOptions {
  /** Each GET is held this long before it is passed on (S3's first byte on AWS: 20-50 ms). */
  getDelayMs?: number;
}

/** Starts the counting proxy in front of `target` (moto_server's endpoint). */
export async function startAwsRequestCounter(
  target: string,
  options: AwsRequestCounterOptions = {},
): Promise<AwsRequestCounter> {
  const to = new URL(target);
  const agent = new Agent({ keepAlive: true });
  let counts = emptyCounts();
  let perKey = new Map<string, KeyWrites>();
  let getsInFlight = 0;
  const server = createServer((incoming, answer) => {
    const service = serviceOf(incoming);
    const isGet = incoming.method === "GET";
    if (isGet) {
      getsInFlight++;
      counts.mostGetsInFlight = Math.max(counts.mostGetsInFlight, getsInFlight);
      answer.on("close", () => getsInFlight--);
    }
    // S3 bodies (shards) stream through; the small JSON requests are read to be counted.
    const buffered = service === "dynamodb" || service === "sqs";
    const chunks: Buffer[] = [];
    const answerChunks: Buffer[] = [];
    if (buffered) incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    const pass = () => {
      const outgoing = request(
        {
          host: to.hostname,
          port: to.port,
          method: incoming.method,
          path: incoming.url,
          headers: incoming.headers,
          agent,
        },
        (upstream) => {
          answer.writeHead(upstream.statusCode ?? 502, upstream.headers);
          if (buffered) upstream.on("data", (chunk: Buffer) => answerChunks.push(chunk));
          upstream.on("end", () =>
            countRequest(
              counts,
              perKey,
              incoming,
              Buffer.concat(chunks).toString(),
              Buffer.concat(answerChunks).toString(),
            ),
          );
          upstream.pipe(answer);
        },
      );
      outgoing.on("error", (error) => answer.destroy(error));
      incoming.pipe(outgoing);
    };
    if (isGet && options.getDelayMs) setTimeout(pass, options.getDelayMs);
    else pass();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    take() {
      const taken = counts;
      counts = emptyCounts();
      counts.mostGetsInFlight = getsInFlight;
      perKey = new Map();
      return taken;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
