import { createHash } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { bodyBehaviourApplies, sendWithBehaviour } from "./bodyBehaviour";
import { breakSchema, oversizeBody, type ScheduledFault, scheduledFault } from "./faultSchedule";
import { type FaultSettings, faultFor } from "./faults";
import type { UpstreamLimiter } from "./limiters";
import type { LimiterSettings } from "./limiters/settings";
import { Throttle } from "./throttle";

export interface SimRequest {
  method: string;
  url: URL;
  headers: IncomingMessage["headers"];
  body: string;
}

export interface SimResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Defaults to application/json. */
  contentType?: string;
}

export type SimHandler = (request: SimRequest) => SimResponse | Promise<SimResponse>;

export interface RunningSimulator {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Requests received, faulted ones included. */
  readonly requests: number;
  /** Requests answered 429 by the enforced rate limit, quota or limiter (`limit`, `quota`, `limiter`). */
  readonly throttled: number;
  /** Requests a scheduled fault hit, and pages or data a handler's own fault changed (`countFault`). */
  readonly faulted: number;
  /** For a handler that injects a fault of its own (a page fault, a change of data). */
  countFault(): void;
  /** When each request arrived (epoch ms), in order: how tests see the rate a client kept. */
  readonly arrivals: readonly number[];
  /**
   * Milliseconds from a request's arrival to its answer's last byte handed to the socket, on
   * average over the answers sent (`undefined` before the first): the upstream's own time, its
   * latency setting plus its timers' slack and its handler, which no client can shorten.
   */
  readonly meanAnswerMs: number | undefined;
  close(): Promise<void>;
}

/** A real HTTP server on loopback that applies the fault knobs before the handler. */
export async function startSimServer(
  handler: SimHandler,
  faults: () => FaultSettings,
): Promise<RunningSimulator> {
  let requests = 0;
  let faulted = 0;
  const arrivals: number[] = [];
  const throttle = new Throttle();
  const limiters = limiterCache();
  let limiterRefused = 0;
  let answered = 0;
  let answeringMs = 0;
  const attempts = new Map<string, number>();
  /** The request's key (`METHOD /path?query`) and its attempt number (from 1). */
  const attemptOf = (req: IncomingMessage) => {
    const key = `${req.method} ${req.url}`;
    const attempt = (attempts.get(key) ?? 0) + 1;
    attempts.set(key, attempt);
    return { key, attempt };
  };
  /** For `perRequest` faults: a fixed offset per request, plus its attempt number. */
  const perRequestNumber = ({ key, attempt }: { key: string; attempt: number }) =>
    (createHash("sha256").update(key).digest().readUInt32BE(0) % 10_007) + attempt;
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const n = ++requests;
    const arrivedAt = Date.now();
    arrivals.push(arrivedAt);
    const since = performance.now();
    res.once("finish", () => {
      answered++;
      answeringMs += performance.now() - since;
    });
    try {
      const settings = faults();
      const throttled = throttle.check(settings.limit, settings.quota, arrivedAt);
      const limiter =
        throttled.accepted && settings.limiter ? await limiters.of(settings.limiter) : undefined;
      const admission = limiter ? await limiter.admit() : undefined;
      if (limiter && admission?.accepted) res.once("close", () => limiter.release());
      if (admission && !admission.accepted) limiterRefused++;
      const limits = {
        accepted: throttled.accepted && admission?.accepted !== false,
        headers: { ...throttled.headers, ...admission?.headers },
      };
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      if (settings.latencyMs) await sleep(settings.latencyMs);
      if (!limits.accepted) {
        send(res, {
          status: 429,
          headers: limits.headers,
          body: { message: "rate limit exceeded" },
        });
        return;
      }
      const attempt = attemptOf(req);
      const number = settings.perRequest ? perRequestNumber(attempt) : n;
      const fault = faultFor(number, settings);
      if (fault?.kind === "drop") {
        req.socket.destroy();
        return;
      }
      if (fault?.kind === "slow") await sleep(fault.delayMs);
      if (fault?.kind === "status") {
        send(res, {
          status: fault.status,
          headers: fault.headers,
          body: { message: "simulated fault" },
        });
        return;
      }
      const scheduled = settings.schedule
        ? scheduledFault(settings.schedule, attempt.key, attempt.attempt)
        : undefined;
      if (scheduled) faulted++;
      if (scheduled?.kind === "slow") await sleep(scheduled.delayMs);
      if (scheduled && (await answerBeforeHandler(req, res, scheduled, attempt.attempt))) return;
      const response = await handler({
        method: req.method ?? "GET",
        url: new URL(req.url ?? "/", "http://127.0.0.1"),
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      const answer: SimResponse =
        fault?.kind === "lost_answer"
          ? { status: 502, body: { message: "simulated lost answer" } }
          : response;
      const headed = { ...answer, headers: { ...limits.headers, ...answer.headers } };
      const behaviour = settings.body;
      if (scheduled) sendFaulty(req, res, headed, scheduled);
      else if (behaviour && bodyBehaviourApplies(behaviour, number, attempt.key)) {
        faulted++;
        const { head, body } = serialise(headed);
        await sendWithBehaviour(res, headed.status, head, body, behaviour);
      } else send(res, headed);
    } catch (error) {
      send(res, { status: 500, body: { message: `simulator error: ${String(error)}` } });
    }
  });
  server.keepAliveTimeout = 5_000;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return requests;
    },
    get faulted() {
      return faulted;
    },
    countFault() {
      faulted++;
    },
    get throttled() {
      return throttle.refused + limiterRefused;
    },
    arrivals,
    get meanAnswerMs() {
      return answered === 0 ? undefined : answeringMs / answered;
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
      await limiters.close();
    },
  };
}

/**
 * The limiter for the current `limiter` setting: made when the setting (the object) changes, so a
 * test may swap it while the simulator runs. The limiters' libraries are loaded on first use. A
 * setting that does not parse answers every request 500, naming the field.
 */
function limiterCache() {
  let current: { input: LimiterSettings; limiter: Promise<UpstreamLimiter> } | undefined;
  return {
    of(input: LimiterSettings): Promise<UpstreamLimiter> {
      const previous = current;
      if (previous?.input === input) return previous.limiter;
      previous?.limiter.then((old) => old.close()).catch(() => {});
      const limiter = import("./limiters").then((m) => m.createLimiter(input));
      current = { input, limiter };
      return limiter;
    },
    async close() {
      (await current?.limiter.catch(() => undefined))?.close();
    },
  };
}

/** The answer's headers (without its length) and its body as bytes. */
function serialise(response: SimResponse): { head: Record<string, string>; body: Buffer } {
  const body = response.body === undefined ? "" : JSON.stringify(response.body);
  const head = {
    ...(body ? { "content-type": response.contentType ?? "application/json; charset=utf-8" } : {}),
    ...response.headers,
  };
  return { head, body: Buffer.from(body, "utf8") };
}

function send(res: ServerResponse, response: SimResponse): void {
  if (res.destroyed) return;
  const { head, body } = serialise(response);
  res.writeHead(response.status, head);
  res.end(body);
}

/** A scheduled fault that replaces the answer (a status, a drop, an oversized body); true if it did. */
async function answerBeforeHandler(
  req: IncomingMessage,
  res: ServerResponse,
  fault: ScheduledFault,
  attempt: number,
): Promise<boolean> {
  switch (fault.kind) {
    case "status429":
      send(res, {
        status: 429,
        headers:
          fault.retryAfterSeconds === undefined
            ? {}
            : { "retry-after": String(fault.retryAfterSeconds) },
        body: { message: "simulated rate limit" },
      });
      return true;
    case "status5xx":
      send(res, {
        status: [502, 503, 504][attempt % 3] as number,
        body: { message: "simulated server error" },
      });
      return true;
    case "drop":
      req.socket.destroy();
      return true;
    case "oversize":
      res.writeHead(200, {
        "content-type": "application/json; charset=utf-8",
        "content-length": String(fault.bytes),
      });
      // The client stops reading at its cap and drops the connection: that ends the stream.
      await pipeline(Readable.from(oversizeBody(fault.bytes)), res).catch(() => {});
      return true;
    default:
      return false;
  }
}

/** The handler's answer, spoiled by a scheduled fault that acts on the body. */
function sendFaulty(
  req: IncomingMessage,
  res: ServerResponse,
  response: SimResponse,
  fault: ScheduledFault,
): void {
  const ok = response.status >= 200 && response.status < 300;
  const broken =
    ok && fault.kind === "schema" ? breakSchema(response.body, fault.breaks) : undefined;
  const cut = ok && (fault.kind === "cutBody" || fault.kind === "truncatedJson");
  if (res.destroyed) return;
  if (!cut) {
    send(res, broken === undefined ? response : { ...response, body: broken });
    return;
  }
  const body = Buffer.from(JSON.stringify(response.body ?? {}), "utf8");
  const half = body.subarray(0, Math.floor(body.length / 2));
  res.writeHead(response.status, {
    "content-type": response.contentType ?? "application/json; charset=utf-8",
    ...response.headers,
    "content-length": String(fault.kind === "cutBody" ? body.length : half.length),
  });
  if (fault.kind === "truncatedJson") res.end(half);
  // The connection drops once the half is on its way: the client sees a body cut short.
  else res.write(half, () => req.socket.destroy());
}
