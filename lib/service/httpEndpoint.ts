import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ConfigError } from "../errors";
import type { Logger } from "../logging";
import { HTTP_VARIABLES, type HttpSettings, localUrlOf } from "./httpSettings";

/** What one path answers: a status, a content type and a body. */
export interface Answer {
  status: number;
  contentType: string;
  body: string;
}

/** The paths served, each by a function that answers GET (HEAD gets the same without a body). */
export type Routes = Readonly<Record<string, () => Answer | Promise<Answer>>>;

export const ALLOWED_METHODS = "GET, HEAD";

/** A JSON answer. */
export function json(status: number, value: unknown): Answer {
  return { status, contentType: "application/json", body: `${JSON.stringify(value)}\n` };
}

export interface HttpEndpoint {
  /** Where a client on this host reaches it (the port taken when 0 was asked). */
  readonly url: string;
  /** Stops listening and ends the connections open; resolves once the listener is closed. */
  close(): Promise<void>;
}

/**
 * The service's monitoring endpoint (CONNECTOR_HTTP_PORT): `routes` and nothing else; any other
 * path 404, any method but GET and HEAD 405 with `Allow`. No request body is read; an answer is
 * never cached. A port that cannot be taken fails the start (exit 2) naming the variable.
 */
export async function startHttpEndpoint(
  settings: HttpSettings,
  routes: Routes,
  logger: Logger,
): Promise<HttpEndpoint> {
  const server = createServer((request, response) => {
    void answer(request, response, routes).catch((error: unknown) => {
      logger.error("the monitoring endpoint failed to answer", { path: pathOf(request), error });
      if (!response.headersSent) send(response, request, json(500, { error: "internal_error" }));
      else response.destroy();
    });
  });
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      reject(
        new ConfigError([
          {
            variable: HTTP_VARIABLES.port,
            message: `cannot listen on ${settings.host}:${settings.port} (${error.code ?? error.message}); choose a free port, or a ${HTTP_VARIABLES.host} this host has`,
          },
        ]),
      );
    });
    server.listen(settings.port, settings.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = localUrlOf({ host: settings.host, port });
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function answer(request: IncomingMessage, response: ServerResponse, routes: Routes) {
  const path = pathOf(request);
  const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
  if (!route) {
    send(response, request, json(404, { error: "not_found", paths: Object.keys(routes) }));
    return;
  }
  if (request.method !== "GET" && request.method !== "HEAD") {
    response.setHeader("allow", ALLOWED_METHODS);
    send(response, request, json(405, { error: "method_not_allowed", allow: ALLOWED_METHODS }));
    return;
  }
  send(response, request, await route());
}

/** The request's path, its query left out. */
function pathOf(request: IncomingMessage): string {
  return (request.url ?? "/").split("?", 1)[0] ?? "/";
}

function send(
  response: ServerResponse,
  request: IncomingMessage,
  { status, contentType, body }: Answer,
) {
  response.writeHead(status, {
    "content-type": contentType,
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  });
  response.end(request.method === "HEAD" ? undefined : body);
}
