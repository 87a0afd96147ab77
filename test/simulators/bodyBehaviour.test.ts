/**
 * Body behaviours on a real socket: a raw `net` client on loopback reads the bytes as they come.
 * No test measures time. Where a test says "nothing more came", it is while a request on another
 * connection was served in full, with the behaviour's interval or delay set to minutes.
 */
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type BlacklineSimulator, startBlacklineSimulator } from "../../lib/simulators/blackline";
import type { BodyBehaviour } from "../../lib/simulators/bodyBehaviour";

/** The token endpoint without credentials: a short JSON error (400), served by the handler. */
const TOKEN = "^POST /authorize/connect/token";

interface RawAnswer {
  socket: Socket;
  /** Every byte received so far, head and body. */
  bytes(): Buffer;
  /** Resolves once `test` holds for the bytes received. */
  until(test: (bytes: Buffer) => boolean): Promise<Buffer>;
  ended: Promise<void>;
}

function rawRequest(url: string, method: string, path: string): RawAnswer {
  const { port } = new URL(url);
  const socket = connect(Number(port), "127.0.0.1");
  socket.write(`${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n`);
  let received = Buffer.alloc(0);
  const waiters: { test: (b: Buffer) => boolean; resolve: (b: Buffer) => void }[] = [];
  socket.on("data", (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    for (const waiter of [...waiters]) {
      if (waiter.test(received)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(received);
      }
    }
  });
  const ended = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  return {
    socket,
    bytes: () => received,
    until: (test) =>
      test(received)
        ? Promise.resolve(received)
        : new Promise((resolve, reject) => {
            waiters.push({ test, resolve });
            socket.once("close", () => reject(new Error(`closed after ${received.length} bytes`)));
          }),
    ended,
  };
}

const headEnd = (bytes: Buffer) => bytes.indexOf("\r\n\r\n");
const bodyOf = (bytes: Buffer) => bytes.subarray(headEnd(bytes) + 4);
const headOf = (bytes: Buffer) => bytes.subarray(0, headEnd(bytes)).toString("latin1");

/** A request on another connection served in full: the barrier "meanwhile". */
async function servedMeanwhile(sim: BlacklineSimulator): Promise<void> {
  const response = await fetch(`${sim.url}/v1/users`);
  await response.arrayBuffer();
  expect(response.status).toBe(401);
}

let sim: BlacklineSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const start = async (body: BodyBehaviour) => {
  sim = await startBlacklineSimulator({ faults: { body } });
  return sim;
};

describe("body behaviours at the socket", () => {
  it("slow headers: nothing at all is sent before the delay, other requests are served", async () => {
    const s = await start({ kind: "slow_headers", delayMs: 600_000, match: TOKEN });
    const slow = rawRequest(s.url, "POST", "/authorize/connect/token");
    await servedMeanwhile(s);
    await servedMeanwhile(s);
    expect(slow.bytes().length).toBe(0);
    expect(s.stats.faulted).toBe(1);
  });

  it("slow headers after a short delay: the whole answer, its length announced", async () => {
    const s = await start({ kind: "slow_headers", delayMs: 1, match: TOKEN });
    const answer = rawRequest(s.url, "POST", "/authorize/connect/token");
    const bytes = await answer.until(
      (b) =>
        headEnd(b) >= 0 &&
        bodyOf(b).length >= Number(/content-length: (\d+)/i.exec(headOf(b))?.[1]),
    );
    expect(headOf(bytes)).toMatch(/^HTTP\/1\.1 400/);
    expect(JSON.parse(bodyOf(bytes).toString("utf8"))).toHaveProperty("error");
    answer.socket.destroy();
  });

  it("trickle: headers with the whole length, then the given bytes and no more before the next interval", async () => {
    const s = await start({ kind: "trickle", bytes: 3, intervalMs: 600_000, match: TOKEN });
    const answer = rawRequest(s.url, "POST", "/authorize/connect/token");
    const bytes = await answer.until((b) => headEnd(b) >= 0 && bodyOf(b).length >= 3);
    await servedMeanwhile(s);
    expect(bodyOf(answer.bytes()).toString("utf8")).toBe('{"e');
    expect(Number(/content-length: (\d+)/i.exec(headOf(bytes))?.[1])).toBeGreaterThan(3);
    answer.socket.destroy();
  });

  it("trickle to the end: every byte of the body, then the answer ends", async () => {
    const s = await start({ kind: "trickle", bytes: 2, intervalMs: 0, match: TOKEN });
    const answer = rawRequest(s.url, "POST", "/authorize/connect/token");
    const bytes = await answer.until(
      (b) =>
        headEnd(b) >= 0 &&
        bodyOf(b).length >= Number(/content-length: (\d+)/i.exec(headOf(b))?.[1]),
    );
    const body = bodyOf(bytes).toString("utf8");
    expect(JSON.parse(body)).toHaveProperty("error");
    // The same answer a plain request gets.
    s.faults.body = undefined;
    const plain = await fetch(`${s.url}/authorize/connect/token`, { method: "POST" });
    expect(await plain.text()).toBe(body);
    answer.socket.destroy();
  });

  it("trickle for ever: the body, then whitespace with no end, and no length announced", async () => {
    const s = await start({
      kind: "trickle",
      bytes: 4,
      intervalMs: 0,
      forever: true,
      match: TOKEN,
    });
    const answer = rawRequest(s.url, "POST", "/authorize/connect/token");
    const bytes = await answer.until((b) => headEnd(b) >= 0 && bodyOf(b).length >= 400);
    expect(headOf(bytes)).not.toMatch(/content-length/i);
    expect(headOf(bytes)).toMatch(/transfer-encoding: chunked/i);
    // Chunked framing: the body's bytes four at a time, then chunks of one space each.
    const text = bodyOf(bytes).toString("utf8");
    expect(text.startsWith('4\r\n{"er\r\n')).toBe(true);
    expect(text).toContain("\r\n1\r\n \r\n1\r\n \r\n1\r\n \r\n");
    expect(text).not.toContain("0\r\n\r\n");
    answer.socket.destroy();
  });

  it("stall: the whole length announced, part of the body, then silence on an open connection", async () => {
    const s = await start({ kind: "stall", bytes: 5, match: TOKEN });
    const answer = rawRequest(s.url, "POST", "/authorize/connect/token");
    let closed = false;
    void answer.ended.then(() => {
      closed = true;
    });
    const bytes = await answer.until((b) => headEnd(b) >= 0 && bodyOf(b).length >= 5);
    await servedMeanwhile(s);
    await servedMeanwhile(s);
    expect(bodyOf(answer.bytes()).toString("utf8")).toBe('{"err');
    expect(Number(/content-length: (\d+)/i.exec(headOf(bytes))?.[1])).toBeGreaterThan(5);
    expect(closed).toBe(false);
    await s.close();
    sim = undefined;
    await answer.ended;
  });

  it("applies to every Nth request only, counting as the other faults do", async () => {
    const s = await start({ kind: "stall", bytes: 0, every: 2 });
    const first = await fetch(`${s.url}/v1/users`);
    await first.arrayBuffer();
    const second = rawRequest(s.url, "GET", "/v1/users");
    const bytes = await second.until((b) => headEnd(b) >= 0);
    expect(headOf(bytes)).toMatch(/^HTTP\/1\.1 401/);
    expect(bodyOf(bytes).length).toBe(0);
    const third = await fetch(`${s.url}/v1/users`);
    expect((await third.json()) as unknown).toBeTruthy();
    expect(s.stats.faulted).toBe(1);
    second.socket.destroy();
  });
});
