import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// `npm run test:faults`: the whole fault matrix (FAULT_MATRIX=full: every fault, both connectors,
// the CLI, the service and the cloud, several seeds), then RELIABILITY.md. Not part of `npm test`,
// which runs the bounded form of the same files under the main configuration.
export default defineConfig({
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: {
    include: ["test/faults/matrix.test.ts", "test/faults/matrix.aws.test.ts"],
    globalSetup: ["test/faults/globalSetup.ts"],
    env: { FAULT_MATRIX: "full" },
    testTimeout: 3 * 3_600_000,
    hookTimeout: 180_000,
  },
});
