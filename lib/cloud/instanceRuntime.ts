import type { Provisioner } from "../actions";
import type { Environment } from "../config";
import {
  CONNECTOR_NAMES,
  connectorNamed,
  type LoadedSyncer,
  UpstreamConnectors,
} from "../connectors";
import { ConfigError } from "../errors";
import type { UpstreamOptions } from "../http";
import { loadPlatformConnection, PlatformClient } from "../platform";
import { readInstanceSettings, secretName } from "./aws/instanceSecret";
import { InstanceRegistry, type InstanceRow } from "./aws/instances";
import type { CloudConfig } from "./config";

/** No instance of that id is registered on this stage: a request naming it is invalid. */
export class UnknownInstanceError extends ConfigError {
  override name = "UnknownInstanceError";
  override readonly code: string = "unknown_instance";

  constructor(connectorId: string) {
    super([
      {
        variable: "connectorId",
        message: `no connector instance "${connectorId}" is registered on this stage; register it with \`access-connectors cloud put-instance ${connectorId} <${CONNECTOR_NAMES.join("|")}>\``,
      },
    ]);
  }
}

/**
 * One instance, ready to work: its registry row, its settings (as its secret held them when
 * opened), its connector, provisioner and platform client.
 */
export interface InstanceRuntime {
  row: InstanceRow;
  settings: Environment;
  loaded: LoadedSyncer;
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
 * What a warm function keeps of each instance: its connector objects (rebuilt by
 * `UpstreamConnectors` when the connector's settings change) and its platform client (rebuilt
 * when the platform's settings change). They hold configuration, tokens and limiters only;
 * per-run state comes with each call.
 */
interface WarmInstance {
  settings: Environment;
  upstream: UpstreamConnectors;
  platform?: { key: string; client: PlatformClient };
}

const warm = new Map<string, WarmInstance>();

/**
 * Opens an instance from its registry row: `options.row` when the caller has just read it (an
 * instance check), so the row is read once, else read here.
 */
export async function openInstance(
  config: CloudConfig,
  connectorId: string,
  options: { upstream?: UpstreamOptions; row?: InstanceRow } = {},
): Promise<InstanceRuntime> {
  const row = options.row ?? (await new InstanceRegistry(config.instancesTable).get(connectorId));
  if (!row) throw new UnknownInstanceError(connectorId);
  const settings = await readInstanceSettings(
    secretName(config.secretsPrefix, connectorId),
    row.connector,
    row.settingsSavedAt,
  );
  const instance = warmInstance(row, settings, { ...CLOUD_UPSTREAM, ...options.upstream });
  return {
    row,
    settings,
    loaded: instance.upstream.syncer(),
    platform: platformClient(instance, row),
    provisioner: () => instance.upstream.provisioner(),
  };
}

function warmInstance(
  row: InstanceRow,
  settings: Environment,
  upstream: UpstreamOptions,
): WarmInstance {
  let instance = warm.get(row.connectorId);
  if (instance?.upstream.connector.name !== row.connector) {
    const created: WarmInstance = {
      settings,
      upstream: new UpstreamConnectors(
        connectorNamed(row.connector),
        () => created.settings,
        upstream,
      ),
    };
    instance = created;
    warm.set(row.connectorId, instance);
  }
  instance.settings = settings;
  return instance;
}

function platformClient(instance: WarmInstance, row: InstanceRow): PlatformClient {
  const connection = loadPlatformConnection(instance.settings);
  const key = JSON.stringify(connection);
  if (instance.platform?.key !== key) {
    instance.platform = {
      key,
      client: new PlatformClient({
        baseUrl: connection.platformUrl,
        clientId: connection.clientId,
        clientSecret: connection.clientSecret,
        hostId: row.connectorId,
      }),
    };
  }
  return instance.platform.client;
}
