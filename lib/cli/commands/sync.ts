import { constants, type Stats } from "node:fs";
import { access, lstat, rename } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { Environment } from "../../config";
import { loadSyncConnector } from "../../connectors/registry";
import type { ConnectorName } from "../../connectors/types";
import { UsageError } from "../../errors";
import {
  describeVerdict,
  digestSnapshotFile,
  type GuardVerdict,
  judgeRemoval,
  MAX_REMOVAL_FLAG,
  MAX_REMOVAL_VARIABLE,
  parseRemovalLimit,
  SnapshotHeldError,
} from "../../guard";
import { newRequestContext, type UpstreamOptions } from "../../http";
import { removeTempFilesOnExit, runLocalSync, type SyncSummary } from "../../sync";
import type { CliIo } from "../io";
import { createCliLogger } from "../logger";
import { createProgressReporter } from "../progress";
import { defaultSnapshotFile, heldPathFor, releaseCommand } from "../snapshotPaths";
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
 * written beside --out under its held name, then judged by the mass-deletion guard against the
 * snapshot at --out: within the limit it is renamed onto --out; over it, it stays held, --out is
 * left as it was, and a `SnapshotHeldError` (exit 4) says why and how to release it.
 */
export async function syncToFile(
  io: CliIo,
  env: Environment,
  options: SyncOptions,
  upstreamOptions: UpstreamOptions = {},
): Promise<SyncSummary> {
  removeTempFilesOnExit();
  const outFile = resolve(options.out ?? defaultSnapshotFile(options.connector));
  const heldFile = heldPathFor(outFile);
  const limit =
    options.maxRemovalPercent === undefined
      ? parseRemovalLimit(env[MAX_REMOVAL_VARIABLE], MAX_REMOVAL_VARIABLE)
      : parseRemovalLimit(options.maxRemovalPercent, MAX_REMOVAL_FLAG);
  await requireWritableDirectory(dirname(outFile));
  await requireFileOrNothing(outFile, "--out");
  await requireFileOrNothing(heldFile, "--out's held snapshot");
  const logger = createCliLogger(io, options.verbose ?? false);
  const { connector, concurrency } = loadSyncConnector(options.connector, env, upstreamOptions);
  const progress = createProgressReporter(io, `${options.connector} sync`);
  let summary: SyncSummary;
  try {
    summary = await runLocalSync({
      connector,
      outFile: heldFile,
      concurrency,
      ctx: newRequestContext({ logger }),
      onProgress: (p) => progress.update(p),
    });
  } finally {
    progress.stop();
  }
  const verdict = await judgeAgainst(outFile, heldFile, limit);
  if (!verdict.held) await rename(heldFile, outFile);
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

/** The guard's verdict on the new snapshot against what --out holds (nothing, or not a snapshot: nothing to compare). */
async function judgeAgainst(
  outFile: string,
  newFile: string,
  limit: ReturnType<typeof parseRemovalLimit>,
): Promise<GuardVerdict> {
  const previous = (await exists(outFile)) ? await digestSnapshotFile(outFile) : undefined;
  // Nothing to compare with: the new snapshot is not read again (100,000 users take seconds).
  if (!previous || !("digest" in previous)) return { held: false, basis: "first", limit };
  const next = await digestSnapshotFile(newFile);
  if (!("digest" in next)) throw new Error(`the new snapshot ${newFile}: ${next.notSnapshot}`);
  return judgeRemoval(previous.digest, next.digest, limit);
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
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
