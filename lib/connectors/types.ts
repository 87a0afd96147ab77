import type * as z from "zod";
import type { Provisioner } from "../actions";
import type { Environment } from "../config";
import type { UpstreamOptions } from "../http";
import type { Syncer } from "../sync";
import type { UpstreamTuning } from "./upstreamTuning";

/**
 * A connector as each folder defines it (one `definition.ts` a folder, checked with `satisfies`):
 * what it is called and reads, and its capabilities as separate small interfaces, the read side
 * always and the write side when it has one. `lib/connectors/index.ts` lists them; the runtimes
 * see them only through `Connector`, and never branch on a name.
 */
export interface ConnectorIdentity<Name extends string = string> {
  readonly name: Name;
  /** How people know the upstream, in messages: `BlackLine`. */
  readonly display: string;
  /** The prefix of its variables: `CONNECTOR_ACCOUNTING`. */
  readonly variablePrefix: string;
  /** Every variable it reads. */
  readonly variables: readonly string[];
  /** The schema of those variables, keyed by name, with their docs (docs/configuration.md). */
  readonly settings: z.ZodType;
  /** Those that are secrets: each also read from `<NAME>_FILE`, and redacted. */
  readonly secrets: readonly string[];
  /** The entitlements that give administrative power, which a reviewer looks at first. */
  readonly privileged: PrivilegedEntitlements;
}

/** Privileged entitlements, by the type of the resource they are on or by their ids. */
export interface PrivilegedEntitlements {
  /** Every entitlement on a resource of these types (BlackLine: `role`). */
  readonly resourceTypes?: readonly string[];
  /** These entitlements (Valimail: `member_type:owner:assigned`). */
  readonly entitlementIds?: readonly string[];
}

/** Whether a snapshot's entitlement is privileged by its connector's definition. */
export function isPrivileged(
  privileged: PrivilegedEntitlements,
  entitlement: { id: string; resource: { type: string } },
): boolean {
  return (
    (privileged.resourceTypes?.includes(entitlement.resource.type) ?? false) ||
    (privileged.entitlementIds?.includes(entitlement.id) ?? false)
  );
}

/** The read side: the settings (with the tuning every connector has) and the syncer built from them. */
export interface SyncCapability<Config extends UpstreamTuning> {
  /** Validates the settings, naming each variable wrong (ConfigError); makes no request. */
  loadConfig(env: Environment): Config;
  syncer(config: Config, options: UpstreamOptions): Syncer;
}

/** The write side: the actions it carries out, once its settings switch writes on. */
export interface ProvisioningCapability<Config> {
  /** The actions announced (docs/actions.md) when writes are on. */
  readonly actions: readonly string[];
  /** Whether the settings switch writes on (Valimail: CONNECTOR_PROVISIONING is `true`). */
  writesEnabled(config: Config): boolean;
  provisioner(config: Config, options: UpstreamOptions): Provisioner;
}

export interface ConnectorDefinition<Name extends string, Config extends UpstreamTuning>
  extends ConnectorIdentity<Name>,
    SyncCapability<Config> {
  /** Absent: the connector is read-only, and every write is answered `unsupported`. */
  readonly provisioning?: ProvisioningCapability<Config>;
}

/** A syncer with the limits a runner needs from the same settings. */
export interface LoadedSyncer {
  connector: Syncer;
  /** Jobs run at once by the local runner. */
  concurrency: number;
  /**
   * The configured request rate (unset: learned; 0: no ceiling), which the cloud runtime shares
   * among its workers.
   */
  requestsPerSecond: number | undefined;
}

/** A connector as the runtimes use it: its identity and its capabilities over raw settings. */
export interface Connector<Name extends string = string> extends ConnectorIdentity<Name> {
  /** Validates the settings and builds the syncer (no request is made). */
  sync(env: Environment, options?: UpstreamOptions): LoadedSyncer;
  /** The provisioner; a read-only connector throws `unsupported` before reading any setting. */
  provisioner(env: Environment, options?: UpstreamOptions): Provisioner;
  /** What a host announces: `sync`, and the actions when the settings switch writes on. */
  capabilities(env: Environment): string[];
}
