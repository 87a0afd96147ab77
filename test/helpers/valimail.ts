import { join } from "node:path";
import { loadValimailConfig, ValimailSyncer } from "../../lib/connectors/valimail";
import { newRequestContext } from "../../lib/http";
import type { ValimailSimulator } from "../../lib/simulators/valimail";
import { runLocalSync } from "../../lib/sync";
import { FAST_RETRY } from "./blackline";
import { canonicalRecords, readSnapshot } from "./snapshot";

/** A Valimail upstream: the simulator, or the scimmy peer (test/helpers/scimPeer.ts). */
type Upstream = Pick<ValimailSimulator, "env">;

/** The upstream's variables with no request-rate limit, for fast tests. */
export function valimailEnv(sim: Upstream, extra: Record<string, string> = {}) {
  return { ...sim.env(), CONNECTOR_EMAILAUTH_REQUESTS_PER_SECOND: "0", ...extra };
}

export async function syncValimail(
  sim: Upstream,
  dir: string,
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
) {
  const config = loadValimailConfig(valimailEnv(sim, options.env));
  const connector = new ValimailSyncer(config, {
    retry: FAST_RETRY,
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  });
  const ctx = newRequestContext();
  const { summary } = await runLocalSync({
    connector,
    ctx,
    outFile: join(dir, "valimail.sync.jsonl"),
    concurrency: config.maxConcurrency,
  });
  const lines = await readSnapshot(summary.snapshot);
  return { summary, lines, records: canonicalRecords(lines), counters: ctx.counters };
}
