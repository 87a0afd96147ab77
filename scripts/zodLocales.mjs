// zod's locales (62 languages besides English) come into a bundle with `import { z } from "zod"`
// (or its default export), whose z is an object of every zod export; `import * as z` keeps only
// what is used, English among it (biome's noRestrictedImports asks for it at the import). This
// catches them in a bundle whatever the import's spelling: BENCHMARKS.md (Starting) has what they
// cost.

/** Throws when an esbuild build's outputs (`metafile`, of `what`) hold a zod locale but English. */
export function assertNoZodLocales(metafile, what) {
  const locales = Object.values(metafile.outputs)
    .flatMap((output) => Object.keys(output.inputs))
    .filter((file) => /zod[\\/]v4[\\/]locales[\\/](?!en\.js$|index\.js$)/.test(file));
  if (locales.length > 0) {
    throw new Error(
      `${what} bundles ${locales.length} of zod's locales (${locales[0]}, ...): import zod as \`import * as z from "zod"\``,
    );
  }
}
