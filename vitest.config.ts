import { defineConfig } from "vitest/config";

// Two projects: "core" (unit, simulators, peer) and "aws" (moto_server): test/aws/** and any
// test named *.aws.test.ts. The aws project packages the functions and the stack once, in
// globalSetup, and only when one of its tests is selected; deploying takes a few seconds in
// beforeAll, hence its longer timeouts.
const AWS_TESTS = ["test/aws/**/*.test.ts", "test/**/*.aws.test.ts"];

export default defineConfig({
  test: {
    // Two test files at a time: most of a file's time is spent waiting on simulated latency,
    // moto_server and child processes, so two share this project's two cores well (4.2 min for
    // the suite against 7.5 at one at a time, measured on the two-core machine CI runs on).
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: "core",
          include: ["test/**/*.test.ts"],
          exclude: [...AWS_TESTS, "**/node_modules/**"],
          testTimeout: 60_000,
          hookTimeout: 30_000,
        },
      },
      {
        extends: true,
        test: {
          name: "aws",
          include: AWS_TESTS,
          globalSetup: ["test/aws/globalSetup.ts"],
          // Generous: a test drains queues whose own guard is 240 s (harness/sqs.ts).
          testTimeout: 600_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
