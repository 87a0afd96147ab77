// The fault matrix on the CLI and the self-hosted service (the cloud's cells are in
// matrix.aws.test.ts): every fault of the catalogue, both connectors, seeded. `npm test` runs the
// bounded form; `npm run test:faults` (FAULT_MATRIX=full) runs more seeds and writes
// RELIABILITY.md from the cells both files leave in .build/faults.
import { describe, it } from "vitest";
import { CONNECTORS, FAULTS } from "./catalogue";
import { type CellResult, pool, problem, runCell, unexercised } from "./matrix";
import { saveResults } from "./results";
import { seedsFor, selectFaults } from "./seeds";

const runtimes = ["cli", "service"] as const;

// The two runtimes at once: each is mostly waiting (backoffs, blocks, timeouts; 35 s of CPU in 60 s
// one after the other), and each has a cell of 30 s (the 429 storm without Retry-After, BlackLine,
// seed 1: a block probed ever further apart), so at once they take about 32 s instead of 60.
describe.concurrent("the fault matrix: CLI and service", () => {
  for (const runtime of runtimes) {
    it(`${runtime}: every fault, both connectors: exact or failed loudly with the cause, nothing wrong published`, async ({
      expect,
    }) => {
      const seeds = seedsFor(runtime);
      const tasks = selectFaults(FAULTS).flatMap((fault) =>
        CONNECTORS.flatMap((connector) =>
          seeds.map((seed) => () => runCell(runtime, fault, connector, seed)),
        ),
      );
      // Each cell has its own simulators; the service's cells are child processes.
      const cells: CellResult[] = await pool(runtime === "cli" ? 8 : 6, tasks);
      await saveResults(runtime, cells);

      expect(cells.map(problem).filter((p) => p !== undefined)).toEqual([]);
      expect(cells.reduce((sum, cell) => sum + cell.lost, 0)).toBe(0);
      expect(unexercised(cells)).toEqual([]);
    }, 600_000);
  }
});
