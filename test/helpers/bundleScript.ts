import { resolve } from "node:path";
import { buildSync } from "esbuild";

/**
 * Bundles `contents` (TypeScript importing the repository's modules by paths from its root, e.g.
 * `./lib/snapshot/tempFiles`) into the ES module `outfile`, for a test to run in a process of its own.
 */
export function bundleScript(contents: string, outfile: string): void {
  buildSync({
    stdin: { contents, resolveDir: resolve("."), loader: "ts" },
    bundle: true,
    platform: "node",
    format: "esm",
    outfile,
    logLevel: "silent",
  });
}
