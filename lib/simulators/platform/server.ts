import { createHash } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { gunzipSync } from "node:zlib";
import * as z from "zod";
import { SimTokens } from "../tokens";
import { FaultQueue } from "./FaultQueue";
import type {
  PlatformRoute,
  PlatformSimulator,
  PlatformSimulatorOptions,
  SimFinishedTask,
  SimHello,
  SimLabel,
  SimRequestRecord,
  SimTask,
  SimUpload,
} from "./types";

interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** What a handler sees of a request: the body is read whole (a simulator may buffer). */
interface Received {
  method: string;
  route: PlatformRoute;
  /** The `{id}` of a task route or the `{syncId}` of the upload route. */
  param: string;
  headers: IncomingMessage["headers"];
  body: Buffer;
  chunks: number;
}

const ROUTES: readonly { route: PlatformRoute; method: string; pattern: RegExp }[] = [
  { route: "token", method: "POST", pattern: /^\/auth\/v1\/token$/ },
  { route: "hello", method: "POST", pattern: /^\/connector\/v1\/hello$/ },
  { route: "nextTask", method: "POST", pattern: /^\/connector\/v1\/tasks\/next$/ },
  { route: "heartbeat", method: "POST", pattern: /^\/connector\/v1\/tasks\/([^/]+)\/heartbeat$/ },
  { route: "finish", method: "POST", pattern: /^\/connector\/v1\/tasks\/([^/]+)\/finish$/ },
  { route: "snapshot", method: "PUT", pattern: /^\/connector\/v1\/syncs\/([^/]+)\/snapshot$/ },
  { route: "status", method: "POST", pattern: /^\/connector\/v1\/status$/ },
];

const helloBody = z.object({
  hostId: z.string().min(1),
  connector: z.string().min(1),
  version: z.string().min(1),
  capabilities: z.array(z.string()),
});
const nextTaskBody = z.object({ hostId: z.string().min(1) });
const finishBody = z.object({
  status: z.enum(["succeeded", "failed"]),
  result: z.unknown().optional(),
  error: z.unknown().optional(),
});
const statusBody = z.object({
  label: z.enum(["syncing", "connected", "error"]),
  detail: z.string().optional(),
});

const SHA256_HEX = /^[0-9a-f]{64}$/i;

/**
 * The platform of docs/platform-protocol.md on loopback, for tests and the demo: tokens for one
 * client, bearer checks on every /connector call, a task queue, a label history, snapshot
 * uploads verified against `x-content-sha256` and gunzipped, and faults injected per route in
 * order (never at random).
 */
export async function startPlatformSimulator(
  options: PlatformSimulatorOptions = {},
): Promise<PlatformSimulator> {
  const credentials = {
    clientId: options.clientId ?? "sim-platform-client",
    clientSecret: options.clientSecret ?? "sim-platform-secret-0f3a9c",
  };
  const tokens = new SimTokens<true>(options);
  const revoked = new Set<string>();
  const faults = new FaultQueue();
  faults.add("snapshot", options.failUploads ?? 0, { kind: "status500" });
  const closing = new AbortController();

  const uploads = new Map<string, SimUpload>();
  const labels: SimLabel[] = [];
  const hellos: SimHello[] = [];
  const pending: SimTask[] = [];
  const handedOut: SimTask[] = [];
  const finishedTasks: SimFinishedTask[] = [];
  const heartbeats = new Map<string, number>();
  const requests: SimRequestRecord[] = [];
  let tokenRequests = 0;
  let tokensIssued = 0;
  let taskCounter = 0;

  const now = () => new Date().toISOString();

  const uploadRecord = (syncId: string): SimUpload => {
    let upload = uploads.get(syncId);
    if (!upload) {
      upload = {
        syncId,
        received: 0,
        accepted: 0,
        rejected: 0,
        text: undefined,
        sha256: undefined,
        bytes: 0,
        contentLength: undefined,
        chunks: 0,
      };
      uploads.set(syncId, upload);
    }
    return upload;
  };

  function token(request: Received): Answer {
    tokenRequests++;
    const form = new URLSearchParams(request.body.toString("utf8"));
    if (form.get("grant_type") !== "client_credentials") {
      return oauthError(400, "unsupported_grant_type", "grant_type must be client_credentials");
    }
    if (
      form.get("client_id") !== credentials.clientId ||
      form.get("client_secret") !== credentials.clientSecret
    ) {
      return oauthError(401, "invalid_client", "client authentication failed");
    }
    tokensIssued++;
    const issued = tokens.issue(true);
    return {
      status: 200,
      body: {
        access_token: issued.token,
        token_type: "Bearer",
        expires_in: issued.lifetimeSeconds,
      },
    };
  }

  function authorized(request: Received): boolean {
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1];
    if (bearer === undefined || revoked.has(bearer)) return false;
    return tokens.check(request.headers.authorization) !== undefined;
  }

  function hello(request: Received): Answer {
    const body = parseJson(helloBody, request);
    if (!body.ok) return body.answer;
    hellos.push({ ...body.value, at: now() });
    return { status: 200, body: { pollIntervalSeconds: options.pollIntervalSeconds ?? 5 } };
  }

  function nextTask(request: Received): Answer {
    const body = parseJson(nextTaskBody, request);
    if (!body.ok) return body.answer;
    const task = pending.shift() ?? null;
    if (task) handedOut.push(task);
    return { status: 200, body: { task } };
  }

  function heartbeat(request: Received): Answer {
    const id = request.param;
    if (!handedOut.some((task) => task.id === id)) return unknownTask(id);
    if (finishedTasks.some((task) => task.id === id)) {
      return { status: 409, body: { error: "task_finished", message: `task ${id} is finished` } };
    }
    heartbeats.set(id, (heartbeats.get(id) ?? 0) + 1);
    return { status: 200, body: { ok: true } };
  }

  function finish(request: Received): Answer {
    const id = request.param;
    const body = parseJson(finishBody, request);
    if (!body.ok) return body.answer;
    if (!handedOut.some((task) => task.id === id)) return unknownTask(id);
    if (finishedTasks.some((task) => task.id === id)) {
      return { status: 200, body: { ok: true, duplicate: true } };
    }
    const { status, result, error } = body.value;
    finishedTasks.push({ id, status, result, error, at: now() });
    return { status: 200, body: { ok: true } };
  }

  function status(request: Received): Answer {
    const body = parseJson(statusBody, request);
    if (!body.ok) return body.answer;
    labels.push({ label: body.value.label, detail: body.value.detail, at: now() });
    return { status: 200, body: { ok: true } };
  }

  function snapshot(request: Received): Answer {
    const upload = uploadRecord(request.param);
    const reject = (error: string, message: string): Answer => {
      upload.rejected++;
      return { status: 400, body: { error, message } };
    };
    const declared = request.headers["x-content-sha256"];
    if (typeof declared !== "string" || !SHA256_HEX.test(declared)) {
      return reject("missing_checksum", "x-content-sha256 must be the hex SHA-256 of the body");
    }
    const actual = createHash("sha256").update(request.body).digest("hex");
    if (actual !== declared.toLowerCase()) {
      return reject(
        "checksum_mismatch",
        `x-content-sha256 is ${declared} but the body received hashes to ${actual}`,
      );
    }
    let text: string | undefined;
    try {
      const body = gunzipSync(request.body);
      text = options.keepText === false ? undefined : body.toString("utf8");
    } catch {
      return reject("not_gzip", "the body is not a gzip stream");
    }
    Object.assign(upload, {
      accepted: upload.accepted + 1,
      text,
      sha256: actual,
      bytes: request.body.length,
      contentLength: request.headers["content-length"],
      chunks: request.chunks,
    });
    return {
      status: 200,
      body: { syncId: upload.syncId, bytes: request.body.length, sha256: actual },
    };
  }

  const handlers: Record<PlatformRoute, (request: Received) => Answer> = {
    token,
    hello,
    nextTask,
    heartbeat,
    finish,
    snapshot,
    status,
  };

  function dispatch(request: Received): Answer {
    if (request.route !== "token" && !authorized(request)) {
      return {
        status: 401,
        body: { error: "invalid_token", message: "missing, expired or revoked bearer token" },
      };
    }
    return handlers[request.route](request);
  }

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? "GET";
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    const matched = ROUTES.map((r) => ({ ...r, match: r.pattern.exec(path) })).find((r) => r.match);
    const record: SimRequestRecord = {
      route: matched?.route ?? "unknown",
      method,
      path,
      outcome: 0,
    };
    requests.push(record);
    if (!matched) {
      record.outcome = send(res, { status: 404, body: { error: "not_found" } });
      return;
    }
    const param = decodeURIComponent(matched.match?.[1] ?? "");
    if (matched.route === "snapshot") uploadRecord(param).received++;
    const fault = faults.take(matched.route);
    if (fault?.kind === "drop") {
      record.outcome = "dropped";
      req.socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (fault?.kind === "status500") {
      record.outcome = send(res, { status: 500, body: { error: "simulated_fault" } });
      return;
    }
    if (fault?.kind === "status429") {
      const headers: Record<string, string> =
        fault.retryAfterSeconds === undefined
          ? {}
          : { "retry-after": String(fault.retryAfterSeconds) };
      record.outcome = send(res, { status: 429, headers, body: { error: "rate_limited" } });
      return;
    }
    if (fault?.kind === "slow") {
      await sleep(fault.delayMs ?? 1000, undefined, { signal: closing.signal }).catch(() => {});
      if (res.destroyed || req.socket.destroyed) {
        // The client gave up: carry nothing out (a task would be lost, an upload counted twice).
        record.outcome = "dropped";
        return;
      }
    }
    if (method !== matched.method) {
      record.outcome = send(res, { status: 405, body: { error: "method_not_allowed" } });
      return;
    }
    const answer = dispatch({
      method,
      route: matched.route,
      param,
      headers: req.headers,
      body: Buffer.concat(chunks),
      chunks: chunks.length,
    });
    record.outcome = send(res, answer);
  }

  const server = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      send(res, { status: 500, body: { error: "simulator_error", message: String(error) } });
    });
  });
  server.keepAliveTimeout = 5_000;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    credentials,
    env: (hostId = "sim-host-1") => ({
      CONNECTOR_PLATFORM_URL: url,
      CONNECTOR_CLIENT_ID: credentials.clientId,
      CONNECTOR_CLIENT_SECRET: credentials.clientSecret,
      CONNECTOR_HOST_ID: hostId,
    }),
    enqueueTask(task) {
      const id = task.id ?? `task-${++taskCounter}`;
      if ([...pending, ...handedOut].some((t) => t.id === id)) {
        throw new Error(`task ${id} is already queued or handed out`);
      }
      pending.push(
        task.type === "sync" ? { id, type: "sync" } : { id, type: "action", request: task.request },
      );
      return id;
    },
    failNext(route, count, kind, faultOptions = {}) {
      faults.add(route, count, { kind, ...faultOptions });
    },
    issuedTokens: () => tokens.issued(),
    revokeTokens() {
      for (const issued of tokens.issued()) revoked.add(issued);
    },
    uploads,
    labels,
    hellos,
    handedOut,
    pendingTasks: pending,
    finishedTasks,
    heartbeats,
    get tokenRequests() {
      return tokenRequests;
    },
    get tokensIssued() {
      return tokensIssued;
    },
    requests,
    count: (route) => requests.filter((r) => r.route === route).length,
    async close() {
      closing.abort();
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

function send(res: ServerResponse, answer: Answer): number {
  if (res.destroyed || res.headersSent) return answer.status;
  const body = JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    "content-type": "application/json; charset=utf-8",
    ...answer.headers,
  });
  res.end(body);
  return answer.status;
}

function oauthError(status: number, error: string, description: string): Answer {
  return { status, body: { error, error_description: description } };
}

function unknownTask(id: string): Answer {
  return { status: 404, body: { error: "unknown_task", message: `no task ${id} was handed out` } };
}

function parseJson<T>(
  schema: z.ZodType<T>,
  request: Received,
): { ok: true; value: T } | { ok: false; answer: Answer } {
  let json: unknown;
  try {
    json = JSON.parse(request.body.toString("utf8") || "{}");
  } catch {
    return { ok: false, answer: invalidRequest("the body is not JSON") };
  }
  const result = schema.safeParse(json);
  if (result.success) return { ok: true, value: result.data };
  const problems = result.error.issues
    .map((issue) => `${issue.path.join(".") || "(body)"}: ${issue.message}`)
    .join("; ");
  return { ok: false, answer: invalidRequest(problems) };
}

function invalidRequest(message: string): Answer {
  return { status: 400, body: { error: "invalid_request", message } };
}
