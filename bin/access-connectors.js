#!/usr/bin/env -S node --
// `--` ends Node's own options: without it, Node takes this command's `--env-file` as its own.
// The command line, bundled by `npm run build` (run by `npm install` through `prepare`).
import { existsSync } from "node:fs";

const bundle = new URL("../dist/cli.js", import.meta.url);
if (!existsSync(bundle)) {
  process.stderr.write("access-connectors is not built yet: run `npm run build` in the checkout\n");
  process.exit(1);
}
await import(bundle.href);
