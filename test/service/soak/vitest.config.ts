import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// `npm run test:soak`: the service for SOAK_MINUTES (default 10) against simulators with faults.
// Not part of `npm test`: its files are named *.soak.ts, which the main configuration ignores.
export default defineConfig({
  root: fileURLToPath(new URL("../../..", import.meta.url)),
  test: {
    include: ["test/service/soak/**/*.soak.ts"],
    testTimeout: 4 * 3_600_000,
    hookTimeout: 60_000,
  },
});
