/**
 * Measures `explore`'s index and search at scale (not a test; BENCHMARKS.md's Explore section):
 *   npx esbuild --bundle --platform=node --format=esm --packages=external \
 *     test/explore/measureExplore.ts --outfile=dist/measureExplore.mjs
 *   node --expose-gc dist/measureExplore.mjs DIR [USERS=100000] [diff]
 * writes two generated BlackLine snapshots into DIR once (fixtureSnapshot.ts), then builds the
 * index (with `diff`, both and their changes) and runs each search five times, printing wall and
 * CPU time, RSS and heap.
 */
import { existsSync } from "node:fs";
import { openExplore } from "../../lib/explore";
import { listAccounts } from "../../lib/explore/accountViews";
import { accountsQuery } from "../../lib/explore/apiSchemas";
import { writeFixtureSnapshot } from "./fixtureSnapshot";

const dir = process.argv[2] as string;
const users = Number(process.argv[3] ?? 100000);
const diff = process.argv[4] === "diff";
if (!existsSync(`${dir}/old.jsonl`))
  await writeFixtureSnapshot(`${dir}/new.jsonl`, { users, variant: "new" });
if (!existsSync(`${dir}/old.jsonl`))
  await writeFixtureSnapshot(`${dir}/old.jsonl`, { users, variant: "old" });
globalThis.gc?.();
const rss0 = process.memoryUsage().rss;
const c0 = process.cpuUsage();
const t0 = performance.now();
const { explore } = await openExplore(`${dir}/new.jsonl`, diff ? `${dir}/old.jsonl` : undefined);
const t1 = performance.now();
const c1 = process.cpuUsage(c0);
globalThis.gc?.();
const mem = process.memoryUsage();
console.log(
  `users ${users} diff ${diff}: index ${((t1 - t0) / 1000).toFixed(2)} s wall, cpu user ${(c1.user / 1e6).toFixed(2)} s system ${(c1.system / 1e6).toFixed(2)} s, grants ${explore.index.grantCount}, rss ${(mem.rss / 2 ** 20).toFixed(0)} MiB (before ${(rss0 / 2 ** 20).toFixed(0)}), heap used ${(mem.heapUsed / 2 ** 20).toFixed(0)} MiB`,
);
for (const q of ["ada", "lovelace9", "u4242", "zzz-nothing", "grace hopper", "example.com"]) {
  const times: number[] = [];
  const cpu: number[] = [];
  let total = 0;
  for (let k = 0; k < 5; k++) {
    const s = performance.now();
    const c = process.cpuUsage();
    total = listAccounts(explore, accountsQuery.parse({ q, sort: "login", dir: "desc" })).total;
    times.push(performance.now() - s);
    cpu.push(process.cpuUsage(c).user / 1000);
  }
  times.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  console.log(
    `search "${q}": ${total} matches, median ${times[2]?.toFixed(1)} ms, max ${times[4]?.toFixed(1)} ms; cpu median ${cpu[2]?.toFixed(1)} ms`,
  );
}
const s = performance.now();
listAccounts(
  explore,
  accountsQuery.parse({ risk: "disabled_with_access", status: "disabled", sort: "entitlements" }),
);
console.log(
  `risk filter ${(performance.now() - s).toFixed(1)} ms; peak rss ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`,
);
