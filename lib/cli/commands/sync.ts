import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { Environment } from "../../config";
import { loadSyncConnector } from "../../connectors/registry";
import type { ConnectorName } from "../../connectors/types";
import { UsageError } from "../../errors";
import { newRequestContext, type UpstreamOptions } from "../../http";
import { runLocalSync, type SyncSummary } from "../../sync";
import type { CliIo } from "../io";
import { createCliLogger } from "../logger";
import { createProgressReporter } from "../progress";
import { formatSummary } from "../summary";

export interface SyncOptions {
  connector: ConnectorName;
  out?: string;
  json?: boolean;
  verbose?: boolean;
}

const defaultSnapshotFile = (connector: ConnectorName) => `${connector}.sync.jsonl`;

/** One full sync in this process, to a snapshot file; prints the summary. */
export async function syncToFile(
  io: CliIo,
  env: Environment,
  options: SyncOptions,
  upstreamOptions: UpstreamOptions = {},
): Promise<SyncSummary> {
  const outFile = resolve(options.out ?? defaultSnapshotFile(options.connector));
  await requireWritableDirectory(dirname(outFile));
  const logger = createCliLogger(io, options.verbose ?? false);
  const { connector, concurrency } = loadSyncConnector(options.connector, env, upstreamOptions);
  const progress = createProgressReporter(io, `${options.connector} sync`);
  let summary: SyncSummary;
  try {
    summary = await runLocalSync({
      connector,
      outFile,
      concurrency,
      ctx: newRequestContext({ logger }),
      onProgress: (p) => progress.update(p),
    });
  } finally {
    progress.stop();
  }
  io.stdout.write(options.json ? `${JSON.stringify(summary)}\n` : formatSummary(summary));
  return summary;
}

/** Checked before any request, so a typo in --out costs nothing upstream. */
async function requireWritableDirectory(dir: string): Promise<void> {
  try {
    await access(dir, constants.W_OK);
  } catch {
    throw new UsageError(
      `--out: the directory ${dir} does not exist or is not writable; create it or choose another path`,
    );
  }
}
