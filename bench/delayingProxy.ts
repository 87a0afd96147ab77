/**
 * An HTTP proxy on 127.0.0.1 in front of moto_server that holds each GET for `getDelayMs` before
 * passing it on: S3's time to first byte (20-50 ms) on loopback, where moto answers in a few
 * ms. A function reaches it through the SDK's per-service endpoint (`AWS_ENDPOINT_URL_S3`), so
 * only that service is slowed. It counts the GETs it passed on and the time the target took to
 * answer them (moto answers one request at a time: that time is a floor S3 does not have).
 */
import { Agent, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

export interface DelayingProxy {
  readonly endpoint: string;
  /** GETs passed on since the last call, and the target's summed time to answer them (ms). */
  takeGets(): { gets: number; targetMs: number };
  close(): Promise<void>;
}

export async function startDelayingProxy(
  target: string,
  options: { getDelayMs: number },
): Promise<DelayingProxy> {
  const to = new URL(target);
  const agent = new Agent({ keepAlive: true });
  let gets = 0;
  let targetMs = 0;
  const server = createServer((incoming, answer) => {
    const method = incoming.method ?? "GET";
    const pass = () => {
      const passed = performance.now();
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
          if (method === "GET") {
            upstream.on("end", () => {
              gets++;
              targetMs += performance.now() - passed;
            });
          }
        },
      );
      outgoing.on("error", (error) => answer.destroy(error));
      incoming.pipe(outgoing);
    };
    if (method === "GET") setTimeout(pass, options.getDelayMs);
    else pass();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    takeGets() {
      const taken = { gets, targetMs: Math.round(targetMs) };
      gets = 0;
      targetMs = 0;
      return taken;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
