/** A recording HTTP proxy on loopback, for tests that check or alter what a client and an upstream exchange. */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface Exchange {
  method: string;
  /** The path as the client sent it, with its query. */
  url: string;
  requestHeaders: IncomingHttpHeaders;
  requestBody: string;
  status: number;
  responseHeaders: Record<string, string>;
  responseBody: string;
}

/** A loopback proxy to `target` that records every exchange passing through it. */
export async function startRecordingProxy(
  target: string,
  /** Called before a request is passed on, e.g. to make a concurrent change upstream. */
  beforeForward: (method: string, url: string, body: string) => void = () => {},
  /** A status to answer a request with instead of passing it on (empty JSON; recorded too). */
  answerInstead: (url: string) => number | undefined = () => undefined,
) {
  const exchanges: Exchange[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", async () => {
      const requestBody = Buffer.concat(chunks).toString("utf8");
      const method = req.method ?? "GET";
      const url = req.url ?? "/";
      const sent = { method, url, requestHeaders: req.headers, requestBody };
      beforeForward(method, url, requestBody);
      const instead = answerInstead(url);
      if (instead !== undefined) {
        const responseHeaders = { "content-type": "application/json" };
        exchanges.push({ ...sent, status: instead, responseHeaders, responseBody: "{}" });
        res.writeHead(instead, responseHeaders).end("{}");
        return;
      }
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (["host", "connection", "content-length", "transfer-encoding"].includes(name)) continue;
        for (const v of [value ?? ""].flat()) headers.append(name, v);
      }
      try {
        const answer = await fetch(new URL(url, target), {
          method,
          headers,
          ...(requestBody === "" ? {} : { body: requestBody }),
        });
        const responseBody = await answer.text();
        const responseHeaders = Object.fromEntries(answer.headers);
        exchanges.push({ ...sent, status: answer.status, responseHeaders, responseBody });
        delete responseHeaders["content-encoding"];
        delete responseHeaders["content-length"];
        delete responseHeaders["transfer-encoding"];
        res.writeHead(answer.status, responseHeaders).end(responseBody);
      } catch (error) {
        res.writeHead(599).end(String(error));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
