import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// `npm run bench:rate-model`: the rate controller against the limiter catalogue on a fake clock
// (matrix.ts). Not part of `npm test`; it measures, it asserts nothing.
export default defineConfig({
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: {
    include: ["bench/rateModel/matrix.ts"],
    testTimeout: 3_600_000,
  },
});
