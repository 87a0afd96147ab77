// Bundles the command line into dist/cli.js. Dependencies stay external: they are installed.
import { build } from "esbuild";

await build({
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
});
