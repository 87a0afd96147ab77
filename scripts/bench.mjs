// Bundles and runs a benchmark from bench/: `npm run bench` (all) or `npm run bench -- blackline`.
import { readdirSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

const wanted = process.argv[2];
const names = readdirSync("bench")
  .filter((file) => file.endsWith(".ts"))
  .map((file) => file.slice(0, -3))
  .filter((name) => !wanted || name === wanted);
for (const name of names) {
  const outfile = `dist/bench/${name}.js`;
  await build({
    entryPoints: [`bench/${name}.ts`],
    outfile,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "esm",
    packages: "external",
    logLevel: "warning",
  });
  console.log(`# bench/${name}.ts`);
  await import(pathToFileURL(outfile).href);
}
