/**
 * `explore` ended by a signal while it builds its index leaves no temporary file beside the
 * snapshot, and no index: the built executable on a generated snapshot of 20,000 users; the test
 * waits for the temporary file to exist (a state, not a time), then signals.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { beforeAll, describe, expect, it } from "vitest";
import { makeTempDir } from "../helpers/tempDir";
import { writeFixtureSnapshot } from "./fixtureSnapshot";

let dir: string;
let snapshot: string;
beforeAll(async () => {
  dir = await makeTempDir("ac-explore-signals-");
  snapshot = join(dir, "s.jsonl");
  await writeFixtureSnapshot(snapshot, { users: 20_000, variant: "new" });
});

describe("explore ended by a signal while it builds its index", () => {
  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)("%s: exit %i, no temporary file, no index", async (signal, code) => {
    const child = spawn(process.execPath, ["bin/access-connectors.js", "explore", snapshot]);
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.stdout.resume();
    const exit = once(child, "close");
    const exited = exit.then(() => true);
    while (!(await readdir(dir)).some((name) => name.endsWith(".tmp")))
      if (await Promise.race([exited, sleep(10).then(() => false)]))
        throw new Error(`explore ended before its index's temporary file existed: ${stderr}`);
    child.kill(signal);
    const [exitCode] = await exit;
    expect(exitCode, stderr).toBe(code);
    expect(await readdir(dir)).toEqual(["s.jsonl"]);
  });
});
