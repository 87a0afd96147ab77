#!/usr/bin/env -S MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 node --max-semi-space-size=4 --heap-growing-percent=30 --
// `--` ends Node's own options: without it, Node takes this command's `--env-file` as its own.
// (124 characters: kernels before Linux 5.1 read no more than 127 of a `#!` line.)
// The two V8 flags only change when garbage is collected, not what is kept: a sync's live heap
// stays near 16 MB at 100,000 users, but by default V8 lets the young generation grow to 32 MB and
// the old one to four times the live heap before collecting, so a sync's peak RSS was 190 MB;
// with these it is about 110 MB (BENCHMARKS.md). The two glibc settings (other C libraries ignore
// them): MALLOC_ARENA_MAX=2 keeps V8's compiler and collector threads to two malloc arenas instead
// of one each, whose freed memory stays resident (115-122 MB instead of 122-132 at 100,000 users
// with no rate limit, CPU unchanged). MALLOC_MMAP_THRESHOLD_ fixes at 128 KiB the size from which
// a block is mapped on its own and unmapped when freed (answers, pages, spool blocks); glibc would
// otherwise raise it to the largest block freed so far and carve later ones from its heap. That
// heap cannot grow when V8 places its code just past it (about one run in eight here): glibc then
// maps memory it never gives back. At 100,000 users with no rate limit, 6 runs in about 50 peaked
// at 126-140 MiB; with the threshold fixed, 12 runs peaked at 105-116 MiB, and with brk made to
// fail in every run (strace), at 117-132 MiB instead of 129-145.
// Run with `node bin/...`, none of them apply.
// The command line, bundled by `npm run build` (run by `npm install` through `prepare`).
import { existsSync } from "node:fs";
import { setFlagsFromString } from "node:v8";

// V8 moves an allocation site's objects straight to the old generation once most of them are seen
// to outlive a young collection ("pretenuring"). A sync's pages are held briefly while other pages
// arrive, enough for V8 to decide so for the sites that build records: their records then filled
// the old generation, for a full collection every 5 MB or so (42 in a sync of 100,000 users; 27
// with it off and pages read item by item, BENCHMARKS.md). V8 reads this flag when it collects, so
// it takes effect here, before any page is read; it changes where objects are allocated, never
// what is kept.
setFlagsFromString("--no-allocation-site-pretenuring");

const bundle = new URL("../dist/cli.js", import.meta.url);
if (!existsSync(bundle)) {
  process.stderr.write("access-connectors is not built yet: run `npm run build` in the checkout\n");
  process.exit(1);
}
await import(bundle.href);
