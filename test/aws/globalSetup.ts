// Package once for the default stage, in vitest's main process, before any test file starts:
// for `npm run test:faults` (test/faults/globalSetup.ts). `npm test` does not use it: there the
// first aws file to deploy packages, under ensurePackaged's lock, while core files already run.
import { ensurePackaged } from "./harness/package";

export default async function setup() {
  const { packaged, ms } = await ensurePackaged("dev");
  if (packaged) console.log(`aws tests: packaged functions and stack in ${ms} ms`);
}
