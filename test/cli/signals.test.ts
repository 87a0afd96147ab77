/**
 * The built executable's temporary files on every way out of `sync`: SIGINT, SIGTERM, a failure,
 * and an uncaught exception. Each run starts against a slow simulator (every answer 300 ms late)
 * with a previous snapshot at --out; the test waits for the temporary files to exist (a state, not
 * a time), ends the run, and checks that only the previous snapshot is left, unchanged.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BlacklineSimulator, startBlacklineSimulator } from "../../lib/simulators/blackline";
import { bundleScript } from "../helpers/bundleScript";
import { makeTempDir } from "../helpers/tempDir";

const PREVIOUS = '{"kind":"sync_start","note":"the previous snapshot"}\n';

let sim: BlacklineSimulator;
beforeAll(async () => {
  sim = await startBlacklineSimulator({
    seed: 9,
    size: { users: 400, teams: 40, roles: 5 },
    faults: { latencyMs: 300 },
  });
});
afterAll(() => sim.close());

interface Run {
  child: ChildProcess;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
}

/** `access-connectors sync blackline --out FILE`, as a user runs it. */
function startSync(out: string, env: Record<string, string> = {}): Run {
  const child = spawn(
    process.execPath,
    ["bin/access-connectors.js", "sync", "blackline", "--out", out],
    {
      env: {
        PATH: process.env.PATH ?? "",
        ...sim.env(),
        CONNECTOR_ACCOUNTING_PAGE_SIZE: "5",
        CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0",
        ...env,
      },
    },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk) => (stderr += chunk));
  child.stdout?.resume();
  // "close": the exit, and stderr read to its end (it can still come in after "exit").
  const exit = once(child, "close").then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  return { child, exit, stderr: () => stderr };
}

/** Waits until the directory holds the sync's temporary files: its `.partial` and its grant spool. */
async function untilTempFiles(dir: string, run: Run): Promise<string[]> {
  const exited = run.exit.then(() => true);
  for (;;) {
    const names = await readdir(dir);
    const temp = names.filter((n) => n.endsWith(".partial") || /^\.grants\..*\.spool$/.test(n));
    if (temp.length === 2) return temp;
    if (await Promise.race([exited, sleep(20).then(() => false)])) {
      throw new Error(`the sync ended before its temporary files existed: ${run.stderr()}`);
    }
  }
}

async function previousSnapshot() {
  const dir = await makeTempDir();
  const out = join(dir, "blackline.sync.jsonl");
  await writeFile(out, PREVIOUS);
  return { dir, out };
}

async function expectOnlyPrevious(dir: string, out: string) {
  expect(await readdir(dir)).toEqual(["blackline.sync.jsonl"]);
  expect(await readFile(out, "utf8")).toBe(PREVIOUS);
}

describe("sync's temporary files on every way out", () => {
  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    it(`removes them on ${signal} mid-sync and exits ${code}, the previous snapshot unchanged`, async () => {
      const { dir, out } = await previousSnapshot();
      const run = startSync(out);

      const temp = await untilTempFiles(dir, run);
      run.child.kill(signal);
      const exit = await run.exit;

      expect(temp).toHaveLength(2);
      expect(exit).toEqual({ code, signal: null });
      await expectOnlyPrevious(dir, out);
    });
  }

  it("removes them when the sync fails (the upstream rejects the credentials): exit 3", async () => {
    const { dir, out } = await previousSnapshot();
    const run = startSync(out, { CONNECTOR_ACCOUNTING_API_KEY: "not-the-key" });

    const exit = await run.exit;

    expect(exit).toEqual({ code: 3, signal: null });
    expect(run.stderr()).toMatch(/error: .*rejected/i);
    await expectOnlyPrevious(dir, out);
  });

  it("removes registered files on an uncaught exception, keeping Node's report and exit code 1", async () => {
    // The registry as the executable installs it, bundled into a script that then crashes.
    const dir = await makeTempDir();
    const script = join(dir, "crash.mjs");
    const victim = join(dir, ".s.jsonl.x.partial");
    bundleScript(
      `
          import { writeFileSync } from "node:fs";
          import { registerTempFile, removeTempFilesOnExit } from "./lib/snapshot/tempFiles";
          removeTempFilesOnExit();
          writeFileSync(${JSON.stringify(victim)}, "partial");
          registerTempFile(${JSON.stringify(victim)});
          setTimeout(() => { throw new Error("crash for the test"); }, 1);
        `,
      script,
    );
    const child = spawn(process.execPath, [script]);
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const [code] = await once(child, "close");

    expect(code).toBe(1);
    expect(stderr).toMatch(/Error: crash for the test/);
    expect(await readdir(dir)).toEqual(["crash.mjs"]);
  });
});
