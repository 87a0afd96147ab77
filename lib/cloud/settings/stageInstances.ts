import { formatDuration } from "../../config";
import type { ConnectorName } from "../../connectors";
import { ConfigError, type ConfigIssue, CredentialsRejectedError, messageOf } from "../../errors";
import { DEFAULT_SYNC_INTERVAL_MS, IntervalError, parseInterval } from "../../platform";
import { registerSecret } from "../../redact";
import {
  deleteInstanceSecret,
  readStoredSettings,
  secretName,
  writeInstanceSecret,
} from "../aws/instanceSecret";
import { InstanceRegistry, type InstanceRow } from "../aws/instances";
import { instanceVariables } from "../instanceSettings";
import type { StartAnswer } from "../lifecycle";
import { SettingsError } from "./errors";
import type { SaveRequest } from "./request";
import { settingsToStore } from "./settingsToStore";

/**
 * Where a stage keeps its instances, and how it starts a sync: the settings function passes its
 * own configuration and starts the run itself; `cloud put-instance` reads the stack's outputs and
 * invokes the scheduler.
 */
export interface SettingsStage {
  instancesTable: string;
  secretsPrefix: string;
  startSync(connectorId: string): Promise<StartAnswer>;
}

/** What `get` and `cloud list` show of an instance: never a secret. */
export interface InstanceSummary {
  connectorId: string;
  connector: ConnectorName;
  interval: string;
  label: InstanceRow["label"];
  labelDetail?: string;
  /** The run in flight, if any. */
  currentRun?: { syncId: string; startedAt?: string };
  lastRun?: { syncId: string; status: "complete" | "error"; at?: string };
}

/** A secret field's value as `get` shows it. */
const MASK = "********";

export interface SaveResult
  extends Pick<InstanceSummary, "connectorId" | "connector" | "interval"> {
  label: InstanceRow["label"];
  /** The first sync, unless the request said `"sync": false`. */
  sync?: StartAnswer;
}

/**
 * Saves an instance (docs/settings.md `save`, and `cloud put-instance`): its settings
 * checked as `sync` checks them (every field at fault in one ConfigError, nothing written), then
 * its secret written whole (replacing what it held; a secret sent as `null` keeps its stored
 * value) and its registry row registered (a run in flight is kept), then its first sync started
 * unless asked not to. The interval is the request's, else the instance's, else 1h.
 */
export async function saveInstance(
  stage: SettingsStage,
  request: SaveRequest,
): Promise<SaveResult> {
  const { connectorId, connector } = request;
  const registry = new InstanceRegistry(stage.instancesTable);
  const secret = secretName(stage.secretsPrefix, connectorId);
  const keeps = Object.values(request.settings).includes(null);
  const [row, stored] = await Promise.all([
    registry.get(connectorId),
    keeps ? readStoredSettings(secret) : undefined,
  ]);
  const issues: ConfigIssue[] = [];
  let intervalMs = (row?.intervalSeconds ?? DEFAULT_SYNC_INTERVAL_MS / 1000) * 1000;
  if (request.interval !== undefined) {
    try {
      intervalMs = parseInterval(request.interval);
    } catch (error) {
      if (!IntervalError.is(error)) throw error;
      issues.push({ variable: "interval", message: error.message });
    }
  }
  let settings: Record<string, string> = {};
  try {
    settings = settingsToStore(connector, request.settings, stored);
  } catch (error) {
    if (ConfigError.is(error)) issues.push(...error.issues);
    // Nothing is asked upstream on a save: a scope the upstream would refuse is a field's mistake.
    else if (CredentialsRejectedError.is(error) && error.field) {
      issues.push({ variable: error.field, message: error.message });
    } else throw error;
  }
  if (issues.length > 0) throw new ConfigError(issues);

  await writeInstanceSecret(secret, settings);
  const intervalSeconds = Math.round(intervalMs / 1000);
  await registry.register({ connectorId, connector, intervalSeconds });
  const saved = { connectorId, connector, interval: formatDuration(intervalSeconds * 1000) };
  if (!request.sync) return { ...saved, label: row?.label ?? "registered" };
  try {
    return { ...saved, label: "syncing", sync: await stage.startSync(connectorId) };
  } catch (error) {
    throw new SettingsError(
      "upstream_error",
      `the settings of ${connectorId} were saved, but its first sync did not start (${messageOf(error)}); save again, or start it with \`cloud sync ${connectorId}\``,
      { cause: error, retryable: true },
    );
  }
}

/** `get`: the instance's summary and its settings, every secret field masked. */
export async function describeInstance(
  stage: SettingsStage,
  connectorId: string,
): Promise<InstanceSummary & { settings: Record<string, string> }> {
  const [row, stored] = await Promise.all([
    new InstanceRegistry(stage.instancesTable).get(connectorId),
    readStoredSettings(secretName(stage.secretsPrefix, connectorId)),
  ]);
  if (!row) throw notFound(connectorId);
  const { secrets } = instanceVariables(row.connector);
  const settings: Record<string, string> = {};
  for (const [name, value] of Object.entries(stored ?? {})) {
    if (secrets.has(name)) registerSecret(value);
    settings[name] = secrets.has(name) ? MASK : value;
  }
  return { ...instanceSummary(row), settings };
}

/**
 * `remove`: the registry row, then the secret. Refused while a run is in flight unless `force`
 * (the run then ends `error`: its jobs find no instance). An id with no row is `not_found`.
 */
export async function removeInstance(
  stage: SettingsStage,
  connectorId: string,
  force: boolean,
): Promise<{ connectorId: string; removed: true }> {
  const registry = new InstanceRegistry(stage.instancesTable);
  const row = await registry.remove(connectorId, { force });
  if (row === "running") {
    const current = await registry.get(connectorId);
    throw new SettingsError(
      "run_in_progress",
      `${connectorId} has a run in flight (${current?.currentSyncId ?? "just started"}); remove it once the run has ended, or send "force": true to remove it now (the run then ends error)`,
      { retryable: true },
    );
  }
  // A secret left without its row (a save cut short) goes too; the answer follows the row.
  await deleteInstanceSecret(secretName(stage.secretsPrefix, connectorId));
  if (row === "absent") throw notFound(connectorId);
  return { connectorId, removed: true };
}

/** What an operator or the platform sees of an instance's row. */
export function instanceSummary(row: InstanceRow): InstanceSummary {
  const summary: InstanceSummary = {
    connectorId: row.connectorId,
    connector: row.connector,
    interval: formatDuration(row.intervalSeconds * 1000),
    label: row.label,
  };
  if (row.labelDetail) summary.labelDetail = row.labelDetail;
  if (row.currentSyncId) {
    summary.currentRun = { syncId: row.currentSyncId, startedAt: row.currentStartedAt };
  }
  if (row.lastSyncId && row.lastSyncStatus) {
    summary.lastRun = { syncId: row.lastSyncId, status: row.lastSyncStatus, at: row.lastSyncAt };
  }
  return summary;
}

function notFound(connectorId: string): SettingsError {
  return new SettingsError(
    "not_found",
    `no connector instance "${connectorId}" on this stage; save it first (op "save", or \`cloud put-instance\`)`,
  );
}
