import type { Runtime } from "./catalogue";

/**
 * The seeds each runtime runs: `npm test` runs the bounded matrix (two seeds on the CLI, one on
 * the service and the cloud); FAULT_MATRIX=full (`npm run test:faults`) runs five on the CLI and
 * the service, three on the cloud (its runs take longest).
 */
export function seedsFor(runtime: Runtime): number[] {
  if (process.env.FAULT_MATRIX === "full") return runtime === "cloud" ? [1, 2, 3] : [1, 2, 3, 4, 5];
  return runtime === "cli" ? [1, 2] : [1];
}

/** FAULT_ONLY=<regular expression> runs only the faults whose name matches (to look into one). */
export function selectFaults<T extends { id: string }>(faults: readonly T[]): T[] {
  const only = process.env.FAULT_ONLY;
  return only ? faults.filter((fault) => new RegExp(only, "i").test(fault.id)) : [...faults];
}
