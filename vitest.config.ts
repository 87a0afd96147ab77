import { relative } from "node:path";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

// Two projects: "core" (unit, simulators, peer) and "aws" (moto_server): test/aws/** and any
// test named *.aws.test.ts. The aws project's first file to deploy packages the functions and
// the stack (ensurePackaged, under a lock the others wait on; not in a globalSetup, which would
// hold every file of both projects for those 7 s); packaging and deploying take seconds in
// beforeAll, hence its longer timeouts.
const AWS_TESTS = ["test/aws/**/*.test.ts", "test/**/*.aws.test.ts"];

/**
 * Seconds each of the slowest files took (CI's Node 22 pass, two workers, clean clone). Only an
 * order: the two workers take files in turn, and a long file taken last runs alone at the end.
 * Vitest's own order on a clean checkout is the aws project first, then the largest files: the
 * fault matrix (a short file, then 42 s; 31 s since its two runtimes run at once) came last and
 * ran alone for its last 40 s.
 */
const SLOW_FILES: Readonly<Record<string, number>> = {
  // The stack at the sync worker's concurrency, the removal guard's and the settings function's cases.
  "test/aws/cloud.test.ts": 150,
  "test/faults/matrix.test.ts": 31,
  "test/service/container.test.ts": 38,
  "test/faults/matrix.aws.test.ts": 35,
  "test/secrets/service.test.ts": 20,
  "test/aws/template.test.ts": 18,
  "test/aws/tenants.test.ts": 44,
  "test/http/upstreamLimits.test.ts": 16,
  "test/connectors/blackline/sync.test.ts": 15,
  "test/service/service.test.ts": 15,
  "test/aws/secrets.test.ts": 14,
  "test/explore/browser.test.ts": 12,
  "test/sync/deadline.aws.test.ts": 9,
  "test/http/HttpClient.test.ts": 8.5,
  // 8 s, and the deployed stack's cases (6 s as deploy.test.ts) less a deploy of their own.
  "test/aws/harness.test.ts": 10,
  "test/service/guard.test.ts": 8,
  "test/service/writeErrors.test.ts": 7.5,
  "test/connectors/valimail/provisioning.test.ts": 7,
  "test/http/statusCounters.test.ts": 6.6,
  "test/sync/bounds.test.ts": 6.5,
  "test/service/monitor.test.ts": 6,
  "test/http/deadline.test.ts": 5.2,
  "test/connectors/valimail/sync.test.ts": 4.7,
  "test/platform/deadline.test.ts": 4,
  "test/cli/demo.test.ts": 4,
  "test/property/pagingQuirks.test.ts": 3.7,
  "test/platform/upload.test.ts": 3.6,
  "test/snapshot/jsonLines.test.ts": 3.1,
  "test/snapshot/writeErrors.test.ts": 3,
  "test/cli/signals.test.ts": 3,
  "test/service/loopWatch.test.ts": 2.8,
  "test/cli/guard.test.ts": 2.5,
};

/**
 * Longest first (the files above by their seconds, the rest after them in Vitest's own order),
 * whatever their project: with two workers, the run ends about when its longest files do
 * instead of one of them running alone at the end.
 */
class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const root = this.ctx.config.root;
    const seconds = (spec: TestSpecification) => SLOW_FILES[relative(root, spec.moduleId)] ?? 0;
    return base
      .map((spec, index) => ({ spec, index, s: seconds(spec) }))
      .sort((a, b) => b.s - a.s || a.index - b.index)
      .map(({ spec }) => spec);
  }
}

export default defineConfig({
  test: {
    // Two test files at a time: most of a file's time is spent waiting on simulated latency,
    // moto_server and child processes, so two share this project's two cores well (4.2 min for
    // the suite against 7.5 at one at a time, measured on the two-core machine CI runs on).
    maxWorkers: 2,
    sequence: { sequencer: SlowestFirst },
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
          // Generous: a test drains queues whose own guard is 240 s (harness/sqs.ts).
          testTimeout: 600_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
