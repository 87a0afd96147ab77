import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

// The executable run as a user runs it (npx, a symlink on PATH): through its shebang, so the Node
// flags it carries are held against this Node version (an unknown flag would stop every command).
describe("bin/access-connectors.js run through its shebang", () => {
  it("starts and prints the version", () => {
    const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };
    const run = spawnSync("bin/access-connectors.js", ["--version"], { encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toBe(version);
  });
});
