/**
 * How an answer's bytes reach the client: headers late, a body that trickles in (to its end, or
 * for ever), or a body that stops partway with the connection left open and silent. Chosen per
 * request like the other faults (every Nth request and/or the requests whose `METHOD /path?query`
 * matches), and applied to the handler's answers only (not to a limiter's 429 or an injected
 * status). The server only writes: what a client does with the bytes is the client's business.
 */
import type { ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import * as z from "zod";

const selection = {
  /** Only request number n (from 1, or per request with `perRequest`) with n % every === 0. */
  every: z.number().int().positive().optional(),
  /** Only the requests whose `METHOD /path?query` matches this regular expression. */
  match: z.string().optional(),
};

export const bodyBehaviourSchema = z.discriminatedUnion("kind", [
  /** The status line and headers after `delayMs`, then the whole body at once. */
  z.strictObject({
    kind: z.literal("slow_headers"),
    delayMs: z.number().int().min(0),
    ...selection,
  }),
  /**
   * Headers at once, then the body `bytes` bytes every `intervalMs`. With `forever`, the answer
   * has no Content-Length and, once the body is sent, one space (JSON's whitespace) follows every
   * `intervalMs` until the client goes; otherwise Content-Length is the body's, and it ends.
   */
  z.strictObject({
    kind: z.literal("trickle"),
    bytes: z.number().int().positive(),
    intervalMs: z.number().int().min(0),
    forever: z.boolean().optional(),
    ...selection,
  }),
  /**
   * Headers announcing the whole body (Content-Length), the first `bytes` bytes of it (default:
   * half), then nothing: the connection stays open and silent until the client or the server
   * closes it.
   */
  z.strictObject({
    kind: z.literal("stall"),
    bytes: z.number().int().min(0).optional(),
    ...selection,
  }),
]);

export type BodyBehaviour = z.input<typeof bodyBehaviourSchema>;

/** Whether `behaviour` applies to request number `n`, whose key is `METHOD /path?query`. */
export function bodyBehaviourApplies(behaviour: BodyBehaviour, n: number, key: string): boolean {
  if (behaviour.every !== undefined && n % behaviour.every !== 0) return false;
  return behaviour.match === undefined || new RegExp(behaviour.match).test(key);
}

/**
 * Sends `body` (already serialised) under `head` the way `behaviour` says. Its waits end when the
 * connection closes, so a closed simulator leaves no timer behind.
 */
export async function sendWithBehaviour(
  res: ServerResponse,
  status: number,
  head: Record<string, string>,
  body: Buffer,
  behaviour: BodyBehaviour,
): Promise<void> {
  const closed = new AbortController();
  res.once("close", () => closed.abort());
  const wait = (ms: number) => sleep(ms, undefined, { signal: closed.signal });
  try {
    await send(res, status, head, body, behaviour, wait);
  } catch (error) {
    if (!closed.signal.aborted) throw error;
  }
}

async function send(
  res: ServerResponse,
  status: number,
  head: Record<string, string>,
  body: Buffer,
  behaviour: BodyBehaviour,
  wait: (ms: number) => Promise<void>,
): Promise<void> {
  switch (behaviour.kind) {
    case "slow_headers":
      await wait(behaviour.delayMs);
      res.writeHead(status, { ...head, "content-length": String(body.length) });
      res.end(body);
      return;
    case "trickle": {
      res.writeHead(
        status,
        behaviour.forever ? head : { ...head, "content-length": String(body.length) },
      );
      res.flushHeaders();
      for (let sent = 0; sent < body.length; sent += behaviour.bytes) {
        res.write(body.subarray(sent, sent + behaviour.bytes));
        await wait(behaviour.intervalMs);
      }
      // Ends only when the connection closes (the wait then throws).
      while (behaviour.forever) {
        res.write(" ");
        await wait(behaviour.intervalMs);
      }
      res.end();
      return;
    }
    case "stall": {
      res.writeHead(status, { ...head, "content-length": String(body.length) });
      res.write(body.subarray(0, behaviour.bytes ?? Math.floor(body.length / 2)));
      return;
    }
  }
}
