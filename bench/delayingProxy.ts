/**
 * An HTTP proxy on 127.0.0.1 in front of moto_server that holds each GET for `getDelayMs` before
 * passing it on: S3's time to first byte (20-50 ms) on loopback, where moto answers in a few
 * ms. A function reaches it through the SDK's per-service endpoint (`AWS_ENDPOINT_URL_S3`), so
 * only that service is slowed. It counts the GETs it passed on, and the most it held at once
 * (counts, not times, so they hold on a loaded machine).
 */
import { Agent, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

export interface DelayingProxy {
  readonly endpoint: string;
  /** GETs since the last call, and the most in flight at once (from arrival to answered). */
  takeGets(): { gets: number; mostInFlight: number };
  close(): Promise<void>;
}

export async function startDelayingProxy(
  target: string,
  options: { getDelayMs: number },
): Promise<DelayingProxy> {
  const to = new URL(target);
  const agent = new Agent({ keepAlive: true });
  let gets = 0;
  let inFlight = 0;
  let mostInFlight = 0;
  const server = createServer((incoming, answer) => {
    const method = incoming.method ?? "GET";
    if (method === "GET") {
      gets++;
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      answer.on("close", () => inFlight--);
    }
    const pass = () => {
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
      const taken = { gets, mostInFlight };
      gets = 0;
      mostInFlight = inFlight;
      return taken;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
