// Bundles the command line into dist/cli.js. Dependencies stay external: they are installed.
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { build } from "esbuild";

const cli = await build({
  entryPoints: { cli: "lib/cli/index.ts" },
  outdir: "dist",
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  // The cloud commands (and the AWS SDK they load) are a chunk of their own, loaded on use.
  splitting: true,
  packages: "external",
  sourcemap: true,
  logLevel: "warning",
  metafile: true,
});

// Chunks of earlier builds (their names are hashes of their content) would pile up in dist/. The
// previous build's stay one build more: a command started before this build loads its chunks on
// use (export, service, cloud) and must still find them.
const LIST = join("dist", ".build-outputs.json");
const written = Object.keys(cli.metafile.outputs).map((file) => relative("dist", file));
const previous = JSON.parse(await readFile(LIST, "utf8").catch(() => "[]"));
const keep = new Set([...written, ...previous]);
for (const entry of await readdir("dist", { withFileTypes: true })) {
  if (entry.isFile() && /\.js(\.map)?$/.test(entry.name) && !keep.has(entry.name)) {
    await rm(join("dist", entry.name), { force: true });
  }
}
await writeFile(LIST, JSON.stringify(written));

// The review page's front end (`explore`): one script and one stylesheet for the browser, with
// preact and htm inside, beside the command line in dist/explore; the page loads nothing else.
await build({
  entryPoints: ["lib/explore/web/app.ts", "lib/explore/web/app.css"],
  outdir: "dist/explore",
  bundle: true,
  platform: "browser",
  target: "es2020",
  format: "esm",
  minify: true,
  legalComments: "none",
  logLevel: "warning",
});
