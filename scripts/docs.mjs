// `npm run docs`: writes docs/configuration.md from the settings' schemas
// (scripts/configReference.ts, bundled here with esbuild: Node 20 runs no TypeScript).
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outfile = join(root, ".build", "docs", "configReference.mjs");
await mkdir(dirname(outfile), { recursive: true });
await build({
  entryPoints: [join(root, "scripts", "configReference.ts")],
  outfile,
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  packages: "external",
  logLevel: "warning",
});
const { CONFIGURATION_PAGE, renderConfigurationPage } = await import(pathToFileURL(outfile).href);
await writeFile(join(root, CONFIGURATION_PAGE), renderConfigurationPage());
console.log(`wrote ${CONFIGURATION_PAGE}`);
