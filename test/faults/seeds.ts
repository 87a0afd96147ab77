import type { Runtime } from "./catalogue";

/**
 * The seeds each runtime runs: `npm test` runs the bounded matrix (two seeds on the CLI, one on
 * the service and the cloud); FAULT_MATRIX=full (`npm run test:faults`) runs five on each.
 */
export function seedsFor(runtime: Runtime): number[] {
  if (process.env.FAULT_MATRIX === "full") return [1, 2, 3, 4, 5];
  return runtime === "cli" ? [1, 2] : [1];
}
