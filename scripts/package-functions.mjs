// Bundles each Lambda function of the cloud-hosted runtime on its own and zips it into
// .build/functions/<key>.zip, the artifact serverless.yml names (`package.artifact`), so the
// framework does no bundling of its own. Everything is bundled, the AWS SDK included: a bundle
// is self-contained and runs the versions package-lock.json pins, not the runtime's copy.
//
// Deterministic: the same sources give byte-identical zips (sorted entries, fixed times and
// modes), so an unchanged function is not redeployed for a new zip.
//
//   node scripts/package-functions.mjs [--quiet] [--analyze]
//
// --analyze prints what takes the bytes of each handler.mjs (esbuild's analyzeMetafile).
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { analyzeMetafile, build } from "esbuild";
import yazl from "yazl";
import { assertNoZodLocales } from "./zodLocales.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outRoot = join(root, ".build", "functions");

/** Function key (as in serverless.yml) -> entry point. */
export const FUNCTIONS = {
  scheduler: "functions/scheduler/handler.ts",
  syncWorker: "functions/sync-worker/handler.ts",
  finalize: "functions/finalize/handler.ts",
  action: "functions/action/handler.ts",
  settings: "functions/settings/handler.ts",
};

/**
 * Scripts a function starts in worker threads, bundled beside its handler (each its own file, as
 * `new Worker` loads it): finalize's shard workers (lib/cloud/shardWorkers.ts).
 */
const WORKERS = { finalize: { "shard-worker": "lib/cloud/shardWorker.ts" } };

/** The file inside each zip; serverless.yml sets `handler: handler.handler`. */
const HANDLER_FILE = "handler.mjs";

// An ESM bundle has no `require`; a CommonJS dependency inside it (and the SDK has some) may
// still call it for Node built-ins, so give it one, with __filename/__dirname for good measure.
const BANNER = [
  'import { createRequire as __acCreateRequire } from "node:module";',
  'import { fileURLToPath as __acFileURLToPath } from "node:url";',
  "const require = __acCreateRequire(import.meta.url);",
  "const __filename = __acFileURLToPath(import.meta.url);",
  'const __dirname = __acFileURLToPath(new URL(".", import.meta.url));',
].join("\n");

// 1980-01-01 plus a day: the earliest time a zip can carry in every time zone.
const ZIP_TIME = new Date(Date.UTC(1980, 0, 2));

/**
 * Whether `binding`, in a dependency's source, is used only for the members `members` (besides
 * being declared and assigned): `binding.version`, never `binding` alone or another member.
 */
function usesOnlyMembers(source, binding, members) {
  // Comments that take whole lines go first (only those: `//` may start inside a string).
  const code = source.replaceAll(/^\s*\/\*[\s\S]*?\*\//gm, "").replaceAll(/^\s*\/\/.*$/gm, "");
  const rest = code.replaceAll(new RegExp(`\\b${binding}\\.(?:${members.join("|")})\\b`, "g"), "");
  for (const use of rest.matchAll(new RegExp(`\\b${binding}\\b`, "g"))) {
    const before = rest.slice(Math.max(0, use.index - 7), use.index);
    const after = rest.slice(use.index + binding.length);
    const declared = /^\s*=(?!=)/.test(after) || /\bimport\s+$/.test(before);
    // A module name in quotes (`require('semver')`) is not a use of the binding.
    const quoted = /["']$/.test(before) && /^["']/.test(after);
    if (!declared && !quoted) return false;
  }
  return true;
}

/**
 * Whether `specifier` is imported exactly once in `source`: a second import of it (another
 * binding, or `require("semver").satisfies(...)` inline) would get the cut module unchecked.
 */
function importedOnce(source, specifier) {
  return (source.match(new RegExp(`["']${escapeRegExp(specifier)}["']`, "g")) ?? []).length === 1;
}

/** `text` as a pattern that matches it literally. */
function escapeRegExp(text) {
  return text.replaceAll(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/**
 * Dependencies that read a field or two of a package.json (the SDK's clients their `version`, for
 * the user agent; the X-Ray SDK its `name` and `version`) import all of it, dependency lists
 * included: 2-4 KiB a package. Where the importer provably reads `name` and `version` only, it gets
 * those two; any other importer gets the whole file.
 */
const packageJsonNameAndVersion = {
  name: "package-json-name-and-version",
  setup(esbuild) {
    esbuild.onResolve({ filter: /[\\/]package\.json$/ }, async (args) => {
      if (!/[\\/]node_modules[\\/]/.test(args.importer)) return undefined;
      const source = await readFile(args.importer, "utf8");
      const quoted = escapeRegExp(args.path);
      const binding =
        source.match(new RegExp(`\\bimport\\s+(\\w+)\\s+from\\s+["']${quoted}["']`)) ??
        source.match(new RegExp(`\\b(\\w+)\\s*=\\s*require\\(\\s*["']${quoted}["']\\s*\\)`));
      if (!binding || !importedOnce(source, args.path)) return undefined;
      if (!usesOnlyMembers(source, binding[1], ["name", "version"])) return undefined;
      const file = join(args.resolveDir, args.path);
      // The path relative to the root, not the absolute one: the source map is the same in any checkout.
      return { path: relative(root, file), namespace: "package-json-name-and-version" };
    });
    esbuild.onLoad({ filter: /.*/, namespace: "package-json-name-and-version" }, async (args) => {
      const { name, version } = JSON.parse(await readFile(join(root, args.path), "utf8"));
      return { contents: JSON.stringify({ name, version }), loader: "json" };
    });
  },
};

/**
 * The X-Ray SDK (under Powertools Tracer) requires all of semver (about 20 KiB minified: ranges,
 * comparators, every function) for one `semver.gte`, in its AWS SDK v2 patcher. Where the importer
 * provably uses `gte` only, it gets a module holding semver's own `gte` (of the copy it would
 * resolve); any other importer gets all of semver.
 */
const semverGteOnly = {
  name: "semver-gte-only",
  setup(esbuild) {
    esbuild.onResolve({ filter: /^semver$/ }, async (args) => {
      const source = await readFile(args.importer, "utf8");
      const binding = source.match(/\b(\w+)\s*=\s*require\(\s*["']semver["']\s*\)/);
      if (!binding || !importedOnce(source, "semver")) return undefined;
      if (!usesOnlyMembers(source, binding[1], ["gte"])) return undefined;
      const gte = await esbuild.resolve("semver/functions/gte.js", {
        kind: "require-call",
        resolveDir: args.resolveDir,
      });
      if (gte.errors.length > 0) return undefined;
      return { path: relative(root, gte.path), namespace: "semver-gte-only" };
    });
    esbuild.onLoad({ filter: /.*/, namespace: "semver-gte-only" }, (args) => ({
      contents: `module.exports = { gte: require("./${basename(args.path)}") };`,
      resolveDir: dirname(join(root, args.path)),
      loader: "js",
    }));
  },
};

async function bundle(key, entry) {
  const outdir = join(outRoot, key);
  await rm(outdir, { recursive: true, force: true });
  const result = await build({
    entryPoints: {
      handler: join(root, entry),
      ...Object.fromEntries(
        Object.entries(WORKERS[key] ?? {}).map(([name, source]) => [name, join(root, source)]),
      ),
    },
    outdir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    target: "node22",
    format: "esm",
    // ESM builds of dependencies first (the SDK's dist-es tree-shakes better than dist-cjs).
    mainFields: ["module", "main"],
    // Names are not kept: stack traces map back through the source map (NODE_OPTIONS
    // --enable-source-maps), and keeping them cost 59 KiB a bundle.
    minify: true,
    sourcemap: "linked",
    sourcesContent: false,
    legalComments: "linked",
    banner: { js: BANNER },
    metafile: true,
    plugins: [semverGteOnly, packageJsonNameAndVersion],
    logLevel: "warning",
  });
  assertNoZodLocales(result.metafile, `the ${key} function`);
  return { outdir, metafile: result.metafile };
}

function zipDir(files, zipPath) {
  return new Promise((resolvePromise, reject) => {
    const zip = new yazl.ZipFile();
    for (const { name, data } of files) {
      zip.addBuffer(data, name, { mtime: ZIP_TIME, mode: 0o100644, compress: true });
    }
    zip.end();
    const out = createWriteStream(zipPath);
    zip.outputStream.pipe(out).on("close", resolvePromise).on("error", reject);
    zip.outputStream.on("error", reject);
  });
}

export async function packageFunctions({ quiet = false, analyze = false } = {}) {
  const started = performance.now();
  await mkdir(outRoot, { recursive: true });
  // esbuild builds in parallel; zipping is cheap.
  const built = await Promise.all(
    Object.entries(FUNCTIONS).map(async ([key, entry]) => ({ key, ...(await bundle(key, entry)) })),
  );
  const report = [];
  for (const { key, outdir, metafile } of built) {
    const names = Object.keys(metafile.outputs)
      .map((file) => relative(outdir, join(root, file)))
      .sort();
    if (!names.includes(HANDLER_FILE)) throw new Error(`${key}: esbuild wrote no ${HANDLER_FILE}`);
    const files = await Promise.all(
      names.map(async (name) => ({ name, data: await readFile(join(outdir, name)) })),
    );
    const zipPath = join(outRoot, `${key}.zip`);
    await zipDir(files, zipPath);
    const zipped = (await stat(zipPath)).size;
    const sha256 = createHash("sha256")
      .update(await readFile(zipPath))
      .digest("hex");
    const handlerBytes = files.find((f) => f.name === HANDLER_FILE)?.data.length ?? 0;
    report.push({ key, zip: relative(root, zipPath), zipped, handlerBytes, sha256 });
    if (analyze) console.log(`${key}:${await analyzeMetafile(metafile)}`);
  }
  await writeFile(join(outRoot, "manifest.json"), `${JSON.stringify(report, null, 2)}\n`);
  if (!quiet) {
    const kb = (n) => `${(n / 1024).toFixed(0)} KiB`;
    for (const r of report) {
      console.log(`${r.zip}: ${kb(r.zipped)} zipped, ${HANDLER_FILE} ${kb(r.handlerBytes)}`);
    }
    console.log(
      `packaged ${report.length} functions in ${Math.round(performance.now() - started)} ms`,
    );
  }
  return report;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await packageFunctions({
    quiet: process.argv.includes("--quiet"),
    analyze: process.argv.includes("--analyze"),
  });
}
