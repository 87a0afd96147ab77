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

// What a command loads before it runs is paid by every run: the packages of other commands wait
// until they are used. Node's module hooks (module.register) list what is loaded: every import of
// the command line, not the require() calls inside CommonJS packages on Node 20, so a package is
// caught when the command line imports it, which is how each of these is reached.
describe("what the command line loads to start", () => {
  const ONLY_ON_USE = [
    "prom-client", // the service's metrics
    "proper-lockfile", // the service's state directory
    "sql.js", // export c1z
    "@hpcc-js/wasm-zstd",
    "@bufbuild/protobuf",
    "cli-progress", // the progress bar, on a terminal only
    "@aws-sdk/", // the cloud commands
  ];

  it.each([[["--version"]], [["sync", "--help"]], [["export", "--help"]]])(
    "%j loads none of the packages other commands use",
    (args) => {
      const hooks = `data:text/javascript,${encodeURIComponent(`
      import { register } from "node:module";
      register("data:text/javascript,${encodeURIComponent(
        'export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write("loaded " + r.url + "\\n"); return r; }',
      )}");`)}`;
      const run = spawnSync(process.execPath, ["--import", hooks, "dist/cli.js", ...args], {
        encoding: "utf8",
      });
      expect(run.status).toBe(0);
      const loaded = run.stderr.split("\n").filter((line) => line.startsWith("loaded "));
      expect(loaded.some((line) => line.includes("/node_modules/zod/"))).toBe(true);
      for (const name of ONLY_ON_USE) {
        expect(loaded.filter((line) => line.includes(`/node_modules/${name}`))).toEqual([]);
      }
    },
  );
});
