// Before the AWS tests: package once for the default stage, here in vitest's main process, so
// the test files (in parallel workers) find a current package instead of racing to build one.
// Runs only when a test of the aws project is selected.
import { ensurePackaged } from "./harness/package";

export default async function setup() {
  const { packaged, ms } = await ensurePackaged("dev");
  if (packaged) console.log(`aws tests: packaged functions and stack in ${ms} ms`);
}
