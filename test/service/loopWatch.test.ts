/**
 * `/livez` answers 503 while the process's event loop is stuck (lib/service/loopWatch.ts).
 *
 * A loop blocked outright answers no probe at all (the probe times out, which a kubelet or the
 * image's HEALTHCHECK counts as a failure too); what can answer 503 is a loop that turns between
 * long blocks, or the first turn after one. That is made for real here: a child process runs the
 * monitoring endpoint (startHttpEndpoint, 127.0.0.1, port 0) with a LoopWatch whose bounds are
 * injected small (a 10 ms tick, stuck at 200 ms instead of 1 s and 10 s), and on request blocks its
 * own loop with a 400 ms busy wait in a timer callback, again and again with one turn between; it
 * says so once the first wait is over (said at once, a probe could be served before any wait).
 * Machine load only makes the lag longer, so every probe answered while it lags is a 503; once the
 * lag stops, the test polls until one tick on time brings the 200 back (no sleep, no timing).
 * The boundary itself (just under and at the bound) is checked on an injected clock.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { LoopWatch } from "../../lib/service/loopWatch";
import { bundleScript } from "../helpers/bundleScript";
import { makeTempDir } from "../helpers/tempDir";
import { waitFor } from "./harness";

const CHILD = `
  import { createInterface } from "node:readline";
  import { performance } from "node:perf_hooks";
  import { json, startHttpEndpoint } from "./lib/service/httpEndpoint";
  import { LoopWatch } from "./lib/service/loopWatch";

  const watch = new LoopWatch({ tickMs: 10, stuckAfterMs: 200 });
  const silent = { debug() {}, info() {}, warn() {}, error() {} };
  // The route as ServiceMonitor serves it.
  const endpoint = await startHttpEndpoint({ host: "127.0.0.1", port: 0 }, {
    "/livez": () => {
      const loop = watch.check();
      return json(loop.alive ? 200 : 503, { alive: loop.alive, ...loop });
    },
  }, silent);
  let lagging = false;
  let announced = false;
  function block() {
    if (!lagging) return;
    const until = performance.now() + 400;
    while (performance.now() < until) {}
    // Said once the first block is over: the watch's overdue tick runs in this same timers phase,
    // before any probe can be read, so every probe from now on meets a measured lag.
    if (!announced) {
      announced = true;
      console.log("lag");
    }
    setTimeout(block, 0);
  }
  createInterface({ input: process.stdin }).on("line", (line) => {
    if (line === "lag" && !lagging) {
      lagging = true;
      setTimeout(block, 0);
    }
    if (line === "stop") {
      lagging = false;
      console.log(line);
    }
  });
  console.log(endpoint.url);
`;

let child: ChildProcess | undefined;
afterEach(() => {
  child?.kill("SIGKILL");
  child = undefined;
});

async function livez(url: string) {
  const response = await fetch(`${url}/livez`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("GET /livez", () => {
  it("a loop lagging past the bound answers 503 with the reason on every probe, and 200 once the lag stops", async () => {
    const dir = await makeTempDir();
    const script = join(dir, "livez.mjs");
    bundleScript(CHILD, script);
    const started = spawn(process.execPath, [script], { stdio: ["pipe", "pipe", "inherit"] });
    child = started;
    const lines = createInterface({ input: started.stdout })[Symbol.asyncIterator]();
    const next = async () => (await lines.next()).value as string;
    const url = await next();

    expect(await waitFor("200 before the lag", async () => (await livez(url)).status === 200)).toBe(
      true,
    );
    expect((await livez(url)).body).toMatchObject({ alive: true });

    started.stdin.write("lag\n");
    expect(await next()).toBe("lag");
    for (let probe = 0; probe < 3; probe++) {
      const { status, body } = await livez(url);
      expect(status).toBe(503);
      expect(body).toMatchObject({
        alive: false,
        reason: expect.stringMatching(
          /^the event loop was \d+ ms late on its 10 ms timer \(stuck at 200 ms or more\)$/,
        ),
      });
      const late = Number(/was (\d+) ms late/.exec(body.reason as string)?.[1]);
      expect(late).toBeGreaterThanOrEqual(200);
      expect(Math.max(body.lagMs as number, (body.sinceTickMs as number) - 10)).toBe(late);
    }

    started.stdin.write("stop\n");
    expect(await next()).toBe("stop");
    const after = await waitFor("200 after the lag", async () => {
      const answer = await livez(url);
      return answer.status === 200 && answer;
    });
    expect(after.body).toMatchObject({ alive: true });
    expect(after.body).not.toHaveProperty("reason");
  }, 20_000);
});

describe("LoopWatch on an injected clock", () => {
  it("is stuck once the next tick is overdue by the bound, not a millisecond before", () => {
    let now = 1_000;
    // The timer is due in an hour: it never runs in this test, the clock alone moves.
    const watch = new LoopWatch({ tickMs: 3_600_000, stuckAfterMs: 200, now: () => now });
    try {
      expect(watch.check()).toEqual({ alive: true, lagMs: 0, sinceTickMs: 0 });
      now += 3_600_000 + 199;
      expect(watch.check()).toMatchObject({ alive: true, sinceTickMs: 3_600_199 });
      now += 1;
      expect(watch.check()).toEqual({
        alive: false,
        lagMs: 0,
        sinceTickMs: 3_600_200,
        reason: "the event loop was 200 ms late on its 3600000 ms timer (stuck at 200 ms or more)",
      });
    } finally {
      watch.stop();
    }
  });
});
