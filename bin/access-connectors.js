#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=4 --heap-growing-percent=30 --
// `--` ends Node's own options: without it, Node takes this command's `--env-file` as its own.
// The two V8 flags only change when garbage is collected, not what is kept: a sync's live heap
// stays near 16 MB at 100,000 users, but by default V8 lets the young generation grow to 32 MB and
// the old one to four times the live heap before collecting, so a sync's peak RSS was 190 MB;
// with these it is about 120 MB (BENCHMARKS.md). MALLOC_ARENA_MAX=2 (glibc's; other C libraries
// ignore it) keeps V8's compiler and collector threads to two malloc arenas instead of one each,
// whose freed memory stays resident: 115-122 MB instead of 122-132 at 100,000 users with no rate
// limit, CPU unchanged. Run with `node bin/...`, none of them apply.
// The command line, bundled by `npm run build` (run by `npm install` through `prepare`).
import { existsSync } from "node:fs";

const bundle = new URL("../dist/cli.js", import.meta.url);
if (!existsSync(bundle)) {
  process.stderr.write("access-connectors is not built yet: run `npm run build` in the checkout\n");
  process.exit(1);
}
await import(bundle.href);
