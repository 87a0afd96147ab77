import type { SyncSummary } from "../sync";

/** The human summary that ends every sync on stdout. */
export function formatSummary(summary: SyncSummary): string {
  const c = summary.counts;
  const seconds = (summary.durationMs / 1000).toFixed(1);
  const waited = (summary.rateLimitWaitMs / 1000).toFixed(1);
  return [
    `${summary.connector} sync complete (${summary.syncId})`,
    `  records     ${c.resource_type} resource types, ${c.resource} resources, ${c.entitlement} entitlements, ${c.grant} grants`,
    `  skipped     ${summary.skipped.dangling_grant} grants naming objects the lists did not return`,
    `  requests    ${summary.requests} (${summary.retries} retries, ${summary.rateLimitWaits} rate-limit waits, ${waited} s waited)`,
    `  duration    ${seconds} s`,
    `  snapshot    ${summary.snapshot}`,
    "",
  ].join("\n");
}
