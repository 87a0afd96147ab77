// `npm run test:faults`: package the stack once for the cloud's cells (as the aws project does),
// start from no results, and write RELIABILITY.md from the cells the test files left.
import { rm } from "node:fs/promises";
import { join } from "node:path";
import awsSetup from "../aws/globalSetup";
import { writeReliabilityReport } from "./report";
import { RESULTS_DIR } from "./results";

export default async function setup() {
  await rm(RESULTS_DIR, { recursive: true, force: true });
  await awsSetup();
  return async () => {
    await writeReliabilityReport(RESULTS_DIR, join(process.cwd(), "RELIABILITY.md"));
  };
}
