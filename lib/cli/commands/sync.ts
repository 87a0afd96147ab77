import { constants, type Stats } from "node:fs";
import { access, lstat } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { Environment } from "../../config";
import { type ConnectorName, connectorNamed } from "../../connectors";
import { UsageError } from "../../errors";
import {
  describeVerdict,
  MAX_REMOVAL_FLAG,
  MAX_REMOVAL_VARIABLE,
  parseRemovalLimit,
  SnapshotHeldError,
} from "../../guard";
import { newRequestContext, type UpstreamOptions } from "../../http";
import { publishGuarded } from "../../publish";
import { removeTempFilesOnExit } from "../../snapshot";
import { type LocalSyncResult, runLocalSync, type SyncSummary } from "../../sync";
import type { CliIo } from "../io";
import { createCliLogger } from "../logger";
import { createProgressReporter } from "../progress";
import { defaultSnapshotFile, releaseCommand, SnapshotFiles } from "../snapshotPaths";
import { formatSummary } from "../summary";

export interface SyncOptions {
  connector: ConnectorName;
  out?: string;
  json?: boolean;
  verbose?: boolean;
  /** `--max-removal-percent`: wins over CONNECTOR_MAX_REMOVAL_PERCENT. */
  maxRemovalPercent?: string;
}

/**
 * One full sync in this process, to a snapshot file; prints the summary. The new snapshot is
 * written beside --out under its held name, then goes through the guarded publish (lib/publish)
 * against the snapshot at --out: within the limit it is renamed onto --out; over it, it stays
 * held, --out is left as it was, and a `SnapshotHeldError` (exit 4) says why and how to release it.
 */
export async function syncToFile(
  io: CliIo,
  env: Environment,
  options: SyncOptions,
  upstreamOptions: UpstreamOptions = {},
): Promise<SyncSummary> {
  removeTempFilesOnExit();
  const files = new SnapshotFiles(
    options.connector,
    resolve(options.out ?? defaultSnapshotFile(options.connector)),
  );
  const { outFile, heldFile } = files;
  const limit =
    options.maxRemovalPercent === undefined
      ? parseRemovalLimit(env[MAX_REMOVAL_VARIABLE], MAX_REMOVAL_VARIABLE)
      : parseRemovalLimit(options.maxRemovalPercent, MAX_REMOVAL_FLAG);
  await requireWritableDirectory(dirname(outFile));
  await requireFileOrNothing(outFile, "--out");
  await requireFileOrNothing(heldFile, "--out's held snapshot");
  const logger = createCliLogger(io, options.verbose ?? false);
  const { connector, concurrency } = connectorNamed(options.connector).sync(env, upstreamOptions);
  const progress = await createProgressReporter(io, `${options.connector} sync`);
  let synced: LocalSyncResult;
  try {
    synced = await runLocalSync({
      connector,
      outFile: heldFile,
      concurrency,
      ctx: newRequestContext({ logger }),
      onProgress: (p) => progress.update(p),
    });
  } finally {
    progress.stop();
  }
  const { summary, digest } = synced;
  const { verdict } = await publishGuarded({
    snapshotFile: heldFile,
    digest,
    syncId: summary.syncId,
    limit,
    store: files,
    publish: files.publish,
  });
  const result = { ...summary, snapshot: verdict.held ? heldFile : outFile };
  io.stdout.write(
    options.json
      ? `${JSON.stringify({ ...result, guard: verdict })}\n`
      : `${formatSummary(result)}  guard       ${verdict.held ? "HELD: " : ""}${describeVerdict(verdict)}\n`,
  );
  if (verdict.held) {
    const source =
      options.maxRemovalPercent === undefined ? MAX_REMOVAL_VARIABLE : MAX_REMOVAL_FLAG;
    throw new SnapshotHeldError(
      `the new snapshot was held: ${describeVerdict(verdict)} (${source}). ${outFile} is unchanged; the new snapshot is at ${heldFile}. If these removals are real, publish it as it is: ${releaseCommand(options.connector, outFile)}. If not, check the upstream (its users, the API user's scope) and sync again; a later sync within the limit replaces the held snapshot.`,
    );
  }
  return result;
}

/**
 * A snapshot replaces what is at `path`: only a regular file may be replaced (not a directory, a
 * device or a symbolic link), checked before any request.
 */
async function requireFileOrNothing(path: string, what: string): Promise<void> {
  let stats: Stats;
  try {
    stats = await lstat(path);
  } catch {
    return;
  }
  if (stats.isFile()) return;
  const kind = stats.isDirectory()
    ? "a directory"
    : stats.isSymbolicLink()
      ? "a symbolic link"
      : "not a regular file";
  throw new UsageError(
    `${what}: ${path} is ${kind}; name a regular file (it is replaced) or a path that does not exist yet`,
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
