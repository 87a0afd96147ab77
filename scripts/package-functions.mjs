// Bundles each Lambda function of the cloud-hosted runtime on its own and zips it into
// .build/functions/<key>.zip, the artifact serverless.yml names (`package.artifact`), so the
// framework does no bundling of its own. Everything is bundled, the AWS SDK included: a bundle
// is self-contained and runs the versions package-lock.json pins, not the runtime's copy.
//
// Deterministic: the same sources give byte-identical zips (sorted entries, fixed times and
// modes), so an unchanged function is not redeployed for a new zip.
//
//   node scripts/package-functions.mjs [--quiet]
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import yazl from "yazl";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outRoot = join(root, ".build", "functions");

/** Function key (as in serverless.yml) -> entry point. */
export const FUNCTIONS = {
  scheduler: "functions/scheduler/handler.ts",
  syncWorker: "functions/sync-worker/handler.ts",
  finalize: "functions/finalize/handler.ts",
  action: "functions/action/handler.ts",
};

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
 * zod's root and core exports carry every locale (`z.locales`, about 260 KiB minified) for
 * switching the language of its messages; English, the only one used, is imported by zod's schemas
 * on its own. The namespace is left empty in the functions' bundles.
 */
const withoutZodLocales = {
  name: "without-zod-locales",
  setup(esbuild) {
    esbuild.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](?:classic|core)[\\/]/.test(args.importer)
        ? { path: "zod-locales", namespace: "empty-module" }
        : undefined,
    );
    esbuild.onLoad({ filter: /.*/, namespace: "empty-module" }, () => ({
      contents: "export {};",
      loader: "js",
    }));
  },
};

async function bundle(key, entry) {
  const outdir = join(outRoot, key);
  await rm(outdir, { recursive: true, force: true });
  const result = await build({
    entryPoints: { handler: join(root, entry) },
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
    plugins: [withoutZodLocales],
    logLevel: "warning",
  });
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

export async function packageFunctions({ quiet = false } = {}) {
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
  await packageFunctions({ quiet: process.argv.includes("--quiet") });
}
