// The bundles' guard against zod's locales (scripts/zodLocales.mjs), on real esbuild builds of two
// one-line modules: the named import keeps the 62 locales besides English, the namespace import
// none of them.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a build script in plain JavaScript, without declarations
import { assertNoZodLocales } from "../../scripts/zodLocales.mjs";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "zod-locales-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function metafileOf(importLine: string) {
  const entry = join(dir, `${importLine.includes("*") ? "namespace" : "named"}.ts`);
  await writeFile(entry, `${importLine}\nconsole.log(z.string().parse("x"));\n`);
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "esm",
    write: false,
    metafile: true,
    logLevel: "silent",
    // Resolved from the repository's node_modules, as the real builds resolve it.
    nodePaths: [join(process.cwd(), "node_modules")],
  });
  return result.metafile;
}

describe("assertNoZodLocales", () => {
  it("refuses a bundle that imports zod's named z, naming the fix", async () => {
    const metafile = await metafileOf('import { z } from "zod";');
    expect(() => assertNoZodLocales(metafile, "the test bundle")).toThrow(
      /^the test bundle bundles 62 of zod's locales \(.*\): import zod as `import \* as z from "zod"`$/,
    );
  });

  it("passes a bundle that imports zod as a namespace (English only)", async () => {
    const metafile = await metafileOf('import * as z from "zod";');
    const inputs = Object.values(metafile.outputs).flatMap((output) => Object.keys(output.inputs));
    expect(inputs.some((file) => file.endsWith("zod/v4/locales/en.js"))).toBe(true);
    expect(() => assertNoZodLocales(metafile, "the test bundle")).not.toThrow();
  });
});
