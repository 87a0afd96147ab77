// Bundles the command line into dist/cli.js. Dependencies stay external (they are installed), but
// for the two every command loads.
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { build } from "esbuild";
import { assertNoZodLocales } from "./zodLocales.mjs";

/**
 * zod and commander go into the bundle: loaded from node_modules they are some hundred files to
 * resolve and read, about 70 ms of every command's start here (`--version` in 0.42 s instead of
 * 0.50 on average, 30 runs each, alternating). Every other package stays external: the AWS SDK, prom-client and the
 * export's wasm load only with the commands that use them.
 */
const BUNDLED = new Set(["zod", "commander"]);
const onlyBundled = {
  name: "external-but-bundled",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      const name = args.path.startsWith("@")
        ? args.path.split("/").slice(0, 2).join("/")
        : args.path.split("/")[0];
      return BUNDLED.has(name) ? undefined : { path: args.path, external: true };
    });
  },
};

const cli = await build({
  // explore's index worker (lib/explore/buildApart.ts) loads its own entry, beside cli.js.
  entryPoints: { cli: "lib/cli/index.ts", "explore-index-worker": "lib/explore/indexWorker.ts" },
  outdir: "dist",
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  // The cloud commands (and the AWS SDK they load) are a chunk of their own, loaded on use.
  splitting: true,
  plugins: [onlyBundled],
  // commander is CommonJS and requires Node's modules: the bundle gives it `require`.
  banner: {
    js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
  },
  sourcemap: true,
  logLevel: "warning",
  metafile: true,
});

// Chunks of earlier builds (their names are hashes of their content) would pile up in dist/. The
// previous build's stay one build more: a command started before this build loads its chunks on
// use (export, service, cloud) and must still find them.
const LIST = join("dist", ".build-outputs.json");
const written = Object.keys(cli.metafile.outputs).map((file) => relative("dist", file));
// The banner declares `require` in every output: a module declaring its own would make its chunk
// fail to load (a duplicate declaration), maybe one that loads only on use. Caught here instead.
for (const file of written.filter((name) => name.endsWith(".js"))) {
  const text = await readFile(join("dist", file), "utf8");
  if (text.match(/\b(?:const|let|var) require\b/g)?.length !== 1) {
    throw new Error(
      `dist/${file} declares require more than once: drop the module's own createRequire`,
    );
  }
}
assertNoZodLocales(cli.metafile, "the command line");
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
