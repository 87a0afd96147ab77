/**
 * Measures a Valimail sync against the simulator by page size and request rate (pages are read
 * one after another, so page size and rate decide the duration). Prints a table; asserts nothing.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadValimailConfig, ValimailConnector } from "../lib/connectors/valimail";
import { startValimailSimulator } from "../lib/simulators/valimail";
import { runLocalSync } from "../lib/sync";

const USERS = 5000;
const LATENCY_MS = 50;
console.log(`Valimail: ${USERS} accounts, ${LATENCY_MS} ms simulated latency per request`);
const rows = [];
for (const [pageSize, rps] of [
  [100, 10],
  [100, 0],
  [500, 10],
  [1000, 10],
] as const) {
  const sim = await startValimailSimulator({ users: USERS, faults: { latencyMs: LATENCY_MS } });
  const dir = await mkdtemp(join(tmpdir(), "ac-bench-"));
  try {
    const config = loadValimailConfig({
      ...sim.env(),
      CONNECTOR_EMAILAUTH_PAGE_SIZE: String(pageSize),
      CONNECTOR_EMAILAUTH_REQUESTS_PER_SECOND: String(rps),
    });
    const summary = await runLocalSync({
      connector: new ValimailConnector(config),
      outFile: join(dir, "s.jsonl"),
      concurrency: config.maxConcurrency,
    });
    rows.push({
      pageSize,
      requestsPerSecond: rps,
      seconds: summary.durationMs / 1000,
      requests: summary.requests,
    });
  } finally {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}
console.table(rows);
