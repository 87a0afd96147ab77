// `npm run bench [-- --quick] [-- --only a,b]`: builds the command line, bundles bench/ into
// dist/bench/, and runs bench/main.ts (see there). Not part of `npm test`.
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

// Each bundled module keeps its own import.meta.url, so test/aws/harness finds its worker file
// and the repository root from where its sources are, not from dist/bench/.
const keepModuleUrls = {
  name: "keep-module-urls",
  setup(on) {
    on.onLoad({ filter: /\.ts$/ }, async (args) => ({
      contents: (await readFile(args.path, "utf8")).replaceAll(
        "import.meta.url",
        JSON.stringify(pathToFileURL(args.path).href),
      ),
      loader: "ts",
    }));
  },
};

await import(pathToFileURL(join(root, "scripts", "build.mjs")).href);
await build({
  entryPoints: {
    main: "bench/main.ts",
    simulatorHost: "bench/simulatorHost.ts",
    finalizeProcess: "bench/finalizeProcess.ts",
    // finalize's shard workers, beside finalizeProcess as beside finalize's handler.
    "shard-worker": "lib/cloud/shardWorker.ts",
  },
  outdir: join(root, "dist", "bench"),
  outExtension: { ".js": ".mjs" },
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  packages: "external",
  plugins: [keepModuleUrls],
  logLevel: "warning",
  absWorkingDir: root,
});
process.argv.push("--root", root);
await import(pathToFileURL(join(root, "dist", "bench", "main.mjs")).href);
