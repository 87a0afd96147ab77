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
