import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSnapshot } from "../helpers/snapshot";
import { makeTempDir } from "../helpers/tempDir";

/** Runs the built executable as a user would, in a child process. */
function runBin(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["bin/access-connectors.js", ...args], {
      env: { PATH: process.env.PATH ?? "" },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("the access-connectors executable", () => {
  it("runs the demo (two syncs and one action) with no credentials in under 30 seconds", async () => {
    const outDir = await makeTempDir();
    const started = Date.now();

    const run = await runBin(["demo", "--out-dir", outDir]);

    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(run.stdout).toMatch(/blackline sync complete/);
    expect(run.stdout).toContain(join(outDir, "blackline.sync.jsonl"));
    expect(run.stdout).toMatch(/valimail sync complete/);
    for (const file of ["blackline.sync.jsonl", "valimail.sync.jsonl"]) {
      const lines = await readSnapshot(join(outDir, file));
      expect(lines.at(-1)).toMatchObject({ kind: "sync_end", status: "complete" });
    }
    const reply = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "");
    expect(reply).toMatchObject({ status: "succeeded", result: { active: false, changed: true } });
  });

  it("prints help, and exits 2 on an unknown command", async () => {
    const help = await runBin(["--help"]);
    const unknown = await runBin(["launch"]);

    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/sync \[options\] <connector>/);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command 'launch'/);
  });

  it("takes --env-file as its own option when run as an executable (not as Node's)", async () => {
    const run = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(
        "bin/access-connectors.js",
        ["sync", "blackline", "--env-file", "/nonexistent/x.env"],
        {
          env: { PATH: process.env.PATH ?? "" },
        },
      );
      let stderr = "";
      child.stderr.on("data", (chunk) => (stderr += chunk));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stderr }));
    });

    expect(run.stderr).toMatch(/^error: --env-file: cannot read \/nonexistent\/x\.env \(ENOENT\)/);
    expect(run.code).toBe(2);
  });
});
