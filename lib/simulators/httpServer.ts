import { createHash } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { type FaultSettings, faultFor } from "./faults";
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
  /** Requests answered 429 by the enforced rate limit or quota (`limit`, `quota`). */
  readonly throttled: number;
  /** When each request arrived (epoch ms), in order: how tests see the rate a client kept. */
  readonly arrivals: readonly number[];
  close(): Promise<void>;
}

/** A real HTTP server on loopback that applies the fault knobs before the handler. */
export async function startSimServer(
  handler: SimHandler,
  faults: () => FaultSettings,
): Promise<RunningSimulator> {
  let requests = 0;
  const arrivals: number[] = [];
  const throttle = new Throttle();
  const attempts = new Map<string, number>();
  /** For `perRequest` faults: a fixed offset per request, plus its attempt number. */
  const attemptNumber = (req: IncomingMessage) => {
    const key = `${req.method} ${req.url}`;
    const attempt = (attempts.get(key) ?? 0) + 1;
    attempts.set(key, attempt);
    const offset = createHash("sha256").update(key).digest().readUInt32BE(0) % 10_007;
    return offset + attempt;
  };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const n = ++requests;
    const arrivedAt = Date.now();
    arrivals.push(arrivedAt);
    try {
      const settings = faults();
      const limits = throttle.check(settings.limit, settings.quota, arrivedAt);
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
      const fault = faultFor(settings.perRequest ? attemptNumber(req) : n, settings);
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
      send(res, { ...answer, headers: { ...limits.headers, ...answer.headers } });
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
    get throttled() {
      return throttle.refused;
    },
    arrivals,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

function send(res: ServerResponse, response: SimResponse): void {
  if (res.destroyed) return;
  const body = response.body === undefined ? "" : JSON.stringify(response.body);
  res.writeHead(response.status, {
    ...(body ? { "content-type": response.contentType ?? "application/json; charset=utf-8" } : {}),
    ...response.headers,
  });
  res.end(body);
}
