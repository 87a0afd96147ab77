/** For tests of answers that trickle in: such a server, garbage collections, a guard against a hang. */
import { once } from "node:events";
import { createServer, type RequestListener, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { onTestFinished } from "vitest";

/** A full garbage collection, as often as the test likes (`--expose-gc` set at run time). */
export const collectGarbage: () => void =
  (globalThis as { gc?: () => void }).gc ??
  (() => {
    setFlagsFromString("--expose-gc");
    return runInNewContext("gc") as () => void;
  })();

/**
 * What `work` settled with (its value or its error), or "still reading" if it has not settled
 * within `guardMs` (a read that never ends: without the guard the test would hang, not fail).
 */
export async function within(guardMs: number, work: Promise<unknown>): Promise<unknown> {
  let guard: NodeJS.Timeout | undefined;
  const stillReading = new Promise<"still reading">((resolve) => {
    guard = setTimeout(() => resolve("still reading"), guardMs);
  });
  const settled = work.then(
    (value) => value,
    (error: unknown) => error,
  );
  try {
    return await Promise.race([settled, stillReading]);
  } finally {
    clearTimeout(guard);
  }
}

/** A server on loopback for the running test, closed (connections dropped) when it finishes. */
export async function loopbackServer(handler: RequestListener): Promise<string> {
  const server = createServer(handler);
  onTestFinished(() => {
    server.closeAllConnections();
    server.close();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * Answers 200 with JSON's headers and `start` at once, then one space (JSON whitespace) every
 * `intervalMs` for as long as the client reads, with a full garbage collection after each;
 * `onByte` after each space, `onClose` when the client drops the connection.
 */
export function trickleForever(
  res: ServerResponse,
  start: string,
  intervalMs: number,
  on: { byte?: (sent: number) => void; close: () => void },
): void {
  res.writeHead(200, { "content-type": "application/json" });
  res.write(start);
  let sent = 0;
  const timer = setInterval(() => {
    res.write(" ");
    collectGarbage();
    on.byte?.(++sent);
  }, intervalMs);
  res.on("close", () => {
    clearInterval(timer);
    on.close();
  });
}
