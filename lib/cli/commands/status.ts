import type { Command } from "commander";
import { loadEnvironment } from "../../config";
import { ConnectorError, describeIssues, UsageError } from "../../errors";
import { loadHttpSettings, localUrlOf } from "../../service/httpSettings";
import { type StatusReport, statusReport } from "../../service/statusReport";
import type { CliIo } from "../io";

interface StatusOptions {
  service?: boolean;
  url?: string;
  json?: boolean;
  envFile?: string;
}

/**
 * `status --service [--url URL] [--json]`: what the running service's `GET /status` says (its
 * last syncs, readiness, a held snapshot), read at --url, else at CONNECTOR_HTTP_HOST and
 * CONNECTOR_HTTP_PORT as the service reads them. Added to the program by main.ts.
 */
export function addStatusCommand(program: Command, io: CliIo): void {
  program
    .command("status")
    .description("the self-hosted service's last syncs and readiness, from its HTTP endpoint")
    .option("--service", "ask the running self-hosted service (CONNECTOR_HTTP_PORT)")
    .option(
      "--url <url>",
      "the service's endpoint, e.g. http://127.0.0.1:9090 (default: from CONNECTOR_HTTP_HOST and CONNECTOR_HTTP_PORT)",
    )
    .option("--json", "print the answer as one JSON object")
    .option("--env-file <file>", "read variables from this file (the environment wins)")
    .action(async (options: StatusOptions) => {
      const report = await readStatus(io, options);
      io.stdout.write(options.json ? `${JSON.stringify(report)}\n` : describeStatus(report));
    });
}

async function readStatus(io: CliIo, options: StatusOptions): Promise<StatusReport> {
  if (!options.service) {
    throw new UsageError(
      "status tells what the self-hosted service did: pass --service (and --url where CONNECTOR_HTTP_PORT is not set)",
    );
  }
  const base = options.url ?? configuredUrl(io, options.envFile);
  let url: URL;
  try {
    url = new URL("/status", base);
  } catch {
    throw new UsageError(`--url: "${base}" is not an address; give e.g. http://127.0.0.1:9090`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(
      `--url: "${base}" is not an http(s) address; give e.g. http://127.0.0.1:9090`,
    );
  }
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    const { cause } = error as { cause?: { code?: string; message?: string } };
    const reason = cause?.code ?? cause?.message ?? (error as Error).message;
    throw new ConnectorError(
      `cannot reach the service at ${url.origin} (${reason}); is it running, with CONNECTOR_HTTP_PORT set to that port?`,
    );
  }
  if (response.status !== 200) {
    throw new ConnectorError(`the service at ${url.origin} answered ${response.status} to /status`);
  }
  const parsed = statusReport.safeParse(await response.json().catch(() => undefined));
  if (!parsed.success) {
    throw new ConnectorError(
      `the answer of ${url} is not a service's status (${describeIssues(parsed.error.issues, "the body")}); is that address the service's CONNECTOR_HTTP_PORT?`,
    );
  }
  return parsed.data;
}

function configuredUrl(io: CliIo, envFile: string | undefined): string {
  const settings = loadHttpSettings(loadEnvironment({ envFile, env: io.env }));
  if (!settings || settings.port === 0) {
    throw new UsageError(
      "CONNECTOR_HTTP_PORT is not set here: give --url with the service's address (e.g. http://127.0.0.1:9090), or set CONNECTOR_HTTP_PORT as the service has it",
    );
  }
  return localUrlOf(settings);
}

/** The report in lines a person reads: who, ready or why not, a held snapshot, the last syncs. */
export function describeStatus(report: StatusReport): string {
  const lines = [
    `${report.connector} service, host id ${report.hostId}, version ${report.version}, running since ${report.startedAt}`,
    report.ready
      ? "ready"
      : `not ready: ${report.problems.map((p) => `${p.check} ${p.reason} (${p.detail})`).join("; ")}`,
  ];
  if (report.nextSyncAt) lines.push(`next sync at ${report.nextSyncAt}`);
  if (report.held) {
    const { syncId, users, grants, release } = report.held;
    lines.push(
      `held snapshot ${syncId} (${users} users, ${grants} grants): publish it with \`${release}\``,
    );
  }
  lines.push(report.syncs.length === 0 ? "no sync has ended yet" : "last syncs, newest first:");
  for (const sync of report.syncs) {
    const counts = Object.entries(sync.counts ?? {})
      .map(([kind, count]) => `${kind} ${count}`)
      .join(", ");
    const seconds = (sync.durationMs / 1000).toFixed(1);
    const facts = [counts, sync.requests === undefined ? "" : `${sync.requests} requests`]
      .filter(Boolean)
      .join("; ");
    lines.push(
      `  ${sync.startedAt}  ${sync.outcome} (${sync.trigger}, ${seconds} s)${facts ? `  ${facts}` : ""}`,
    );
    if (sync.reason) lines.push(`    ${sync.failure ? `${sync.failure}: ` : ""}${sync.reason}`);
  }
  return `${lines.join("\n")}\n`;
}
