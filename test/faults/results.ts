// Where the matrix's test files leave their cells, and where the report reads them (no test
// helpers imported here: vitest's globalSetup reads this module too).
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { CellResult } from "./matrix";

/** Where each test file leaves its cells for the report. */
export const RESULTS_DIR = join(process.cwd(), ".build", "faults");

export async function saveResults(name: string, cells: readonly CellResult[]): Promise<void> {
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(cells, null, 1)}\n`);
}
