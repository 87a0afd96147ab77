/**
 * Measures a BlackLine sync against the simulator: duration and requests per setting, and the
 * snapshot writer's live heap as the tenant grows (only the sets of written ids may grow). Prints a table; it
 * asserts nothing. Run with `npm run bench`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BlacklineConnector, loadBlacklineConfig } from "../lib/connectors/blackline";
import { startBlacklineSimulator } from "../lib/simulators/blackline";
import {
  grant,
  runLocalSync,
  SnapshotAssembler,
  SnapshotFile,
  type SnapshotRecord,
} from "../lib/sync";

async function measure(options: {
  users: number;
  teams: number;
  latencyMs: number;
  concurrency: number;
  requestsPerSecond: number;
}) {
  const sim = await startBlacklineSimulator({
    seed: 1,
    size: { users: options.users, teams: options.teams, roles: 40 },
    faults: { latencyMs: options.latencyMs },
  });
  const dir = await mkdtemp(join(tmpdir(), "ac-bench-"));
  const config = loadBlacklineConfig({
    ...sim.env(),
    CONNECTOR_ACCOUNTING_MAX_CONCURRENCY: String(options.concurrency),
    CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: String(options.requestsPerSecond),
  });
  try {
    const summary = await runLocalSync({
      connector: new BlacklineConnector(config),
      outFile: join(dir, "s.jsonl"),
      concurrency: config.maxConcurrency,
    });
    return {
      ...options,
      seconds: summary.durationMs / 1000,
      requests: summary.requests,
      records: Object.values(summary.counts).reduce((a, b) => a + b),
    };
  } finally {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}

console.log("Throughput: 5,000 users, 300 teams, 40 roles, 30 ms simulated latency per request");
const rows = [];
for (const [concurrency, rps] of [
  [1, 0],
  [4, 0],
  [8, 0],
  [16, 0],
  [8, 25],
  [8, 50],
] as const) {
  rows.push(
    await measure({ users: 5000, teams: 300, latencyMs: 30, concurrency, requestsPerSecond: rps }),
  );
}
console.table(
  rows.map(({ concurrency, requestsPerSecond, seconds, requests }) => ({
    concurrency,
    requestsPerSecond,
    seconds,
    requests,
  })),
);

console.log("Memory: live heap (after GC) of the snapshot writer alone, by tenant size");
const memory = [];
for (const users of [10_000, 100_000, 300_000]) memory.push(await writerMemory(users));
console.table(memory);

/** Streams a synthetic tenant (a user, a team every 20 users, two grants per user) and samples the live heap. */
async function writerMemory(users: number) {
  const dir = await mkdtemp(join(tmpdir(), "ac-bench-"));
  global.gc?.();
  const baseline = process.memoryUsage().heapUsed;
  let peak = 0;
  const file = await SnapshotFile.open(join(dir, "s.jsonl"), "bench");
  const writer = await SnapshotAssembler.open({
    out: file.stream,
    spoolDir: dir,
    syncId: "bench",
    connector: "bench",
  });
  for (let i = 0; i < users; i += 1000) {
    const page: SnapshotRecord[] = [];
    for (let id = i; id < i + 1000; id++) {
      const team = String(Math.floor(id / 20));
      page.push(
        {
          kind: "resource",
          type: "user",
          id: String(id),
          displayName: `User ${id}`,
          status: "enabled",
          user: { login: `u${id}@example.com`, emails: [`u${id}@example.com`] },
        },
        { kind: "resource", type: "team", id: team, displayName: `Team ${team}` },
        {
          kind: "entitlement",
          id: `team:${team}:member`,
          resource: { type: "team", id: team },
          slug: "member",
          displayName: `Team ${team} member`,
          purpose: "assignment",
          grantableTo: ["user"],
        },
        grant(`team:${team}:member`, { type: "user", id: String(id) }),
        grant(`team:${Math.floor(id / 7)}:member`, { type: "user", id: String(id) }),
      );
    }
    await writer.write(page);
    if (i % 20_000 === 0) {
      global.gc?.();
      peak = Math.max(peak, process.memoryUsage().heapUsed - baseline);
    }
  }
  const result = await writer.complete();
  await file.commit();
  await rm(dir, { recursive: true, force: true });
  const records = Object.values(result.counts).reduce((a, b) => a + b);
  return {
    users,
    records,
    liveHeapMb: (peak / 2 ** 20).toFixed(1),
    bytesPerRecord: Math.round(peak / records),
  };
}
