import { join } from "node:path";
import { BlacklineSyncer, loadBlacklineConfig } from "../../lib/connectors/blackline";
import { newRequestContext } from "../../lib/http";
import type { BlacklineSimulator } from "../../lib/simulators/blackline";
import type { Tenant } from "../../lib/simulators/blackline/tenant";
import { runLocalSync } from "../../lib/sync";
import { canonicalRecords, readSnapshot } from "./snapshot";

/** Fast retries for tests: the simulator's faults are many and the backoff need not be polite. */
export const FAST_RETRY = { baseDelayMs: 5, maxDelayMs: 50 } as const;

/** Syncs the simulator's tenant into `dir` and returns the summary and the snapshot's lines. */
export async function syncBlackline(
  sim: BlacklineSimulator,
  dir: string,
  options: { env?: Record<string, string>; timeoutMs?: number; file?: string } = {},
) {
  const config = loadBlacklineConfig({
    ...sim.env(),
    CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0",
    CONNECTOR_ACCOUNTING_MAX_CONCURRENCY: "16",
    ...options.env,
  });
  const connector = new BlacklineSyncer(config, {
    retry: FAST_RETRY,
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  });
  const ctx = newRequestContext();
  const { summary } = await runLocalSync({
    connector,
    ctx,
    outFile: join(dir, options.file ?? "blackline.sync.jsonl"),
    concurrency: config.maxConcurrency,
  });
  const lines = await readSnapshot(summary.snapshot);
  return { summary, lines, records: canonicalRecords(lines), counters: ctx.counters };
}

/** What a complete snapshot of `tenant` must hold, computed from the simulator's own data. */
export function expectedFromTenant(tenant: Tenant) {
  const grants = new Set<string>();
  for (const [teamId, members] of tenant.teamMembers) {
    for (const userId of members) grants.add(`team:${teamId}:member:user:${userId}`);
  }
  for (const user of tenant.users) {
    for (const roleId of new Set([user.defaultRoleId, ...(user.roles ?? [])])) {
      grants.add(`role:${roleId}:assigned:user:${user.id}`);
    }
  }
  return {
    users: tenant.users.length,
    disabledUserIds: new Set(tenant.users.filter((u) => !u.isActive).map((u) => String(u.id))),
    teams: tenant.teams.length,
    roles: tenant.roles.length,
    grants,
  };
}
