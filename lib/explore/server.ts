import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { ConnectorError, UsageError } from "../errors";
import { AccessGuard, newToken, SECURITY_HEADERS } from "./accessGuard";
import { BadRequest, NotFound } from "./requestErrors";
import type { Answer, Route } from "./routes";

/** The front end's files, built by `npm run build` into dist/explore (scripts/build.mjs). */
const ASSETS = {
  "/app.js": { file: "app.js", type: "text/javascript; charset=utf-8" },
  "/app.css": { file: "app.css", type: "text/css; charset=utf-8" },
} as const;

const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>access-connectors explore</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/app.css">
<script type="module" src="/app.js"></script>
</head>
<body><div id="app"></div></body>
</html>
`;

const MAX_BODY = 64 * 1024;

/** A request without the token; the page shows it (lib/explore/web/accessToken.ts says the same). */
const REFUSED =
  "refused: open the URL with the token that `access-connectors explore` printed (it ends in #token=...)";

export interface ExploreServer {
  /** The address to open, the token in its fragment (`/#token=...`: never sent to a server). */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Reads the bundled front end; a checkout that was not built is told how to build it. */
export async function loadAssets(dir: string): Promise<Map<string, Buffer>> {
  const assets = new Map<string, Buffer>();
  for (const [path, { file }] of Object.entries(ASSETS)) {
    try {
      assets.set(path, await readFile(join(dir, file)));
    } catch {
      throw new Error(`the review page's ${file} is missing from ${dir}: run \`npm run build\``);
    }
  }
  return assets;
}

/**
 * Serves the review page and its API on 127.0.0.1 only (port 0: one the system picks). Every
 * request passes the Host check; the page's shell and assets are then served, and everything else
 * (the API) needs the token as `Authorization: Bearer`.
 */
export async function startExploreServer(options: {
  routes: Route[];
  assets: Map<string, Buffer>;
  port: number;
  token?: string;
}): Promise<ExploreServer> {
  let guard: AccessGuard | undefined;
  const server = createServer((request, response) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.setHeader(name, value);
    handle(request, response).catch((error: unknown) => {
      const [status, message] = errorAnswer(error);
      if (status === 500) {
        const said = ConnectorError.is(error) ? error.message : ((error as Error).stack ?? error);
        process.stderr.write(`explore: ${said}\n`);
      }
      if (!response.headersSent) sendJson(response, status, { error: message });
      else response.destroy();
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const access = guard as AccessGuard;
    if (!access.hostAllowed(request))
      return sendText(
        response,
        403,
        "refused: this page answers only to 127.0.0.1 or localhost on its own port\n",
      );
    const url = new URL(request.url ?? "/", `http://127.0.0.1:${access.port}`);
    const method = request.method ?? "GET";
    // The shell, its script and its stylesheet hold no identity data: served without the token
    // (the page then sends it from the address's fragment on every API call).
    if (url.pathname === "/" || url.pathname in ASSETS) {
      if (method !== "GET" && method !== "HEAD") return methodNotAllowed(response, ["GET", "HEAD"]);
      if (url.pathname === "/") return send(response, 200, "text/html; charset=utf-8", INDEX_HTML);
      const { type } = ASSETS[url.pathname as keyof typeof ASSETS];
      return send(response, 200, type, options.assets.get(url.pathname) as Buffer);
    }
    if (!access.authorized(request)) {
      response.setHeader("www-authenticate", 'Bearer realm="explore"');
      return sendJson(response, 401, { error: REFUSED });
    }
    for (const route of options.routes) {
      const match = route.path.exec(url.pathname);
      if (!match) continue;
      const handler = route.methods[method as "GET" | "POST"];
      if (!handler) return methodNotAllowed(response, Object.keys(route.methods));
      let params: string[];
      try {
        params = match.slice(1).map((p) => decodeURIComponent(p));
      } catch {
        throw new BadRequest("the path is not valid percent-encoding");
      }
      const body = method === "POST" ? await readJsonBody(request) : undefined;
      return answer(response, await handler({ params, query: url.searchParams, body }));
    }
    throw new NotFound(`no such path: ${url.pathname}`);
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE" || error.code === "EACCES"
          ? new UsageError(
              `--port ${options.port}: 127.0.0.1:${options.port} cannot be listened on (${error.code}); give another port, or none for any free one`,
            )
          : error,
      ),
    );
    server.listen(options.port, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const token = options.token ?? newToken();
  guard = new AccessGuard(token, port);
  return {
    url: `http://127.0.0.1:${port}/#token=${token}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A failed request's status and message: the project's errors say what failed and the fix. */
function errorAnswer(error: unknown): [number, string] {
  if (error instanceof BadRequest) return [400, error.message];
  if (error instanceof NotFound) return [404, error.message];
  if (ConnectorError.is(error)) return [500, error.message];
  return [500, "the page failed to answer; see the command's output"];
}

async function readJsonBody(request: IncomingMessage): Promise<unknown> {
  const type = request.headers["content-type"] ?? "";
  if (!/^application\/json\b/i.test(type))
    throw new BadRequest("body: send JSON with Content-Type: application/json");
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new BadRequest(`body: larger than ${MAX_BODY} bytes`);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new BadRequest("body: not valid JSON");
  }
}

function answer(response: ServerResponse, result: Answer) {
  if ("json" in result) return sendJson(response, 200, result.json);
  response.setHeader("content-disposition", `attachment; filename="${result.filename}"`);
  return send(response, 200, result.contentType, result.download);
}

function methodNotAllowed(response: ServerResponse, allowed: string[]) {
  response.setHeader("allow", allowed.join(", "));
  sendJson(response, 405, { error: `method not allowed; use ${allowed.join(" or ")}` });
}

function sendJson(response: ServerResponse, status: number, value: unknown) {
  send(response, status, "application/json", JSON.stringify(value));
}

function sendText(response: ServerResponse, status: number, text: string) {
  send(response, status, "text/plain; charset=utf-8", text);
}

function send(response: ServerResponse, status: number, type: string, body: string | Buffer) {
  response.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) });
  response.end(body);
}
