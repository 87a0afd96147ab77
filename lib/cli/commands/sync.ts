import { constants, type Stats } from "node:fs";
import { access, lstat } from "node:fs/promises";
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
  await requireFileOrNothing(outFile);
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

/**
 * The snapshot replaces what is at --out: only a regular file may be replaced (not a directory,
 * a device or a symbolic link), checked before any request.
 */
async function requireFileOrNothing(path: string): Promise<void> {
  let stats: Stats;
  try {
    stats = await lstat(path);
  } catch {
    return;
  }
  if (stats.isFile()) return;
  const what = stats.isDirectory()
    ? "a directory"
    : stats.isSymbolicLink()
      ? "a symbolic link"
      : "not a regular file";
  throw new UsageError(
    `--out: ${path} is ${what}; name a regular file (it is replaced) or a path that does not exist yet`,
  );
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
