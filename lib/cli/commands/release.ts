import { resolve } from "node:path";
import { blankToUndefined, type Environment } from "../../config/environment";
import { type ConnectorName, parseConnectorName } from "../../connectors";
import { ExitCode, UsageError } from "../../errors";
import { publishHeld } from "../../publish";
// Not the service's index: that loads the whole service (prom-client among it) at every start.
import { askServiceToRelease } from "../../service/askServiceToRelease";
import { defaultStateDir } from "../../service/config";
import { RELEASE_WAIT_MS, SERVICE_VARIABLES } from "../../service/constants";
import type { CliIo } from "../io";
import { defaultSnapshotFile, SnapshotFiles } from "../snapshotPaths";

export interface ReleaseOptions {
  connector?: string;
  out?: string;
  service?: boolean;
}

/**
 * `release <connector> [--out FILE]` (what `sync` held) or `release --service` (what the
 * self-hosted service using this state directory holds): publishes the held snapshot as it is.
 */
export async function releaseHeld(
  io: CliIo,
  env: Environment,
  options: ReleaseOptions,
): Promise<number> {
  if (options.service) {
    if (options.out !== undefined || options.connector !== undefined) {
      throw new UsageError(
        "release --service takes no connector and no --out: it releases what the service in CONNECTOR_STATE_DIR holds",
      );
    }
    return releaseInService(io, env);
  }
  if (options.connector === undefined) {
    throw new UsageError(
      "release: name the connector (release blackline [--out FILE]), or give --service for the self-hosted service",
    );
  }
  await releaseHeldFile(io, { connector: parseConnectorName(options.connector), out: options.out });
  return ExitCode.ok;
}

/**
 * `release <connector> [--out FILE]`: moves the held snapshot onto --out as it is, without
 * syncing again (lib/publish's release, with the files beside --out). Nothing held is bad usage
 * (exit 2); a held file that is not a complete snapshot of that connector is refused and left
 * where it is.
 */
async function releaseHeldFile(
  io: CliIo,
  options: { connector: ConnectorName; out?: string },
): Promise<void> {
  const files = new SnapshotFiles(
    options.connector,
    resolve(options.out ?? defaultSnapshotFile(options.connector)),
  );
  const { outFile, heldFile } = files;
  const outcome = await publishHeld({ store: files, publish: files.publish });
  if (outcome.status !== "released") {
    throw new UsageError(
      `--out: nothing is held for ${outFile} (no file at ${heldFile}); give the --out of the sync that was held`,
    );
  }
  const { users, grants, syncId } = outcome.held;
  io.stdout.write(
    `released ${options.connector} sync ${syncId}: ${heldFile} is now ${outFile} (${users.length} users, ${grants.length} grants)\n`,
  );
}

/**
 * Asks the running service to upload its held snapshot (it alone talks to the platform and
 * writes its state), and waits for its answer: 0 when uploaded; 1 when refused, replaced by a
 * later sync, or not answered in time.
 */
async function releaseInService(io: CliIo, env: Environment): Promise<number> {
  const stateDir = resolve(
    blankToUndefined(env[SERVICE_VARIABLES.stateDir]) ?? defaultStateDir(env),
  );
  const { held, answer } = await askServiceToRelease(stateDir, (asked) =>
    io.stderr.write(
      `asked the service to upload held sync ${asked.syncId} (${asked.users.length} users, ${asked.grants.length} grants); waiting for it...\n`,
    ),
  );
  if (answer?.status === "uploaded") {
    io.stdout.write(`released ${held.connector} sync ${held.syncId}: ${answer.detail}\n`);
    return ExitCode.ok;
  }
  if (answer) {
    io.stderr.write(
      `error: sync ${held.syncId} was not released (${answer.status}): ${answer.detail}\n`,
    );
    return ExitCode.failure;
  }
  io.stderr.write(
    `error: the service did not answer within ${RELEASE_WAIT_MS / 1000} s (is it running with ${stateDir}? a sync in progress finishes first); the request stays, and the service uploads the held snapshot when it takes it\n`,
  );
  return ExitCode.failure;
}
