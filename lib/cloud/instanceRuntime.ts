import { createHash } from "node:crypto";
import type { Provisioner } from "../actions";
import type { Environment } from "../config";
import { type LoadedConnector, loadProvisioner, loadSyncConnector } from "../connectors/registry";
import { ConfigError } from "../errors";
import type { UpstreamOptions } from "../http";
import { loadPlatformConnection, PlatformClient } from "../platform";
import type { CloudConfig } from "./config";
import { readInstanceSettings, secretName } from "./instanceSettings";
import { InstanceRegistry, type InstanceRow } from "./instances";

/** No instance of that id is registered on this stage: a request naming it is invalid. */
export class UnknownInstanceError extends ConfigError {
  override name = "UnknownInstanceError";
  override readonly code: string = "unknown_instance";

  constructor(connectorId: string) {
    super([
      {
        variable: "connectorId",
        message: `no connector instance "${connectorId}" is registered on this stage; register it with \`access-connectors cloud put-instance ${connectorId} <blackline|valimail>\``,
      },
    ]);
  }

  static override is(error: unknown): error is UnknownInstanceError {
    return error instanceof UnknownInstanceError;
  }
}

/** One instance, ready to work: its registry row, connector, provisioner and platform client. */
export interface InstanceRuntime {
  row: InstanceRow;
  loaded: LoadedConnector;
  platform: PlatformClient;
  provisioner(): Provisioner;
}

/** Shorter than the CLI's: a paid function should not wait on one request for long. */
const CLOUD_UPSTREAM: UpstreamOptions = {
  timeoutMs: 20_000,
  // The queue is the retry mechanism: a few quick tries here, then the message comes back later.
  retry: { maxAttempts: 3, maxDelayMs: 2_000 },
};

/**
 * Built instances, kept by a warm function and rebuilt when the secret changes. A connector
 * holds configuration, its token and its limiter only; per-run state comes with each call.
 */
const warm = new Map<string, { fingerprint: string; runtime: Omit<InstanceRuntime, "row"> }>();

export async function openInstance(
  config: CloudConfig,
  connectorId: string,
  options: { upstream?: UpstreamOptions } = {},
): Promise<InstanceRuntime> {
  const row = await new InstanceRegistry(config.instancesTable).get(connectorId);
  if (!row) throw new UnknownInstanceError(connectorId);
  const settings = await readInstanceSettings(
    secretName(config.secretsPrefix, connectorId),
    row.connector,
  );
  const fingerprint = createHash("sha256")
    .update(`${row.connector}\n${JSON.stringify(settings)}`)
    .digest("hex");
  const cached = warm.get(connectorId);
  if (cached?.fingerprint === fingerprint) return { row, ...cached.runtime };
  const runtime = build(row, settings, { ...CLOUD_UPSTREAM, ...options.upstream });
  warm.set(connectorId, { fingerprint, runtime });
  return { row, ...runtime };
}

function build(
  row: InstanceRow,
  settings: Environment,
  upstream: UpstreamOptions,
): Omit<InstanceRuntime, "row"> {
  const loaded = loadSyncConnector(row.connector, settings, upstream);
  const connection = loadPlatformConnection(settings);
  const platform = new PlatformClient({
    baseUrl: connection.platformUrl,
    clientId: connection.clientId,
    clientSecret: connection.clientSecret,
    hostId: row.connectorId,
  });
  let provisioner: Provisioner | undefined;
  return {
    loaded,
    platform,
    provisioner: () => {
      provisioner ??= loadProvisioner(row.connector, settings, upstream);
      return provisioner;
    },
  };
}
