/**
 * The tables of baton's c1z v1 file, as baton-sdk creates them at commit
 * e2bd8af9aa92983fba9fe6c0b9b41766f2283b5f (github.com/conductorone/baton-sdk), with their
 * columns in baton's order and its index names (`%s` filled in as its Schema() methods do):
 *   v1_resource_types  pkg/dotc1z/resouce_types.go  resourcesTypesTableSchema
 *   v1_resources       pkg/dotc1z/resources.go      resourcesTableSchema (baton's Schema() names
 *                      the (parent_resource_type_id, parent_resource_id) index
 *                      idx_resources_external_sync_v1 and the unique (external_id, sync_id) one
 *                      idx_resources_parent_resource_id_v1; kept as baton has them)
 *   v1_entitlements    pkg/dotc1z/entitlements.go   entitlementsTableSchema
 *   v1_grants          pkg/dotc1z/grants.go         grantsTableSchema, plus the two partial
 *                      indexes its Migrations() adds on every open
 *   v1_sync_runs       pkg/dotc1z/sync_runs.go      syncRunsTableSchema
 *   v1_assets, v1_connector_sessions  pkg/dotc1z/assets.go, session_store.go: empty here, but
 *                      baton's InitTables creates every table of allTableDescriptors
 *                      (pkg/dotc1z/sql_helpers.go) on open, so its own files always hold them
 * The file is the 5 bytes `C1ZF\0` (pkg/dotc1z/decoder.go C1ZFileHeader) then one zstd frame of
 * the SQLite database (pkg/dotc1z/file.go saveC1z). Timestamps are text in Go's layout
 * "2006-01-02 15:04:05.999999999" (pkg/dotc1z/sql_helpers.go sqliteTimeFormat).
 */

export const C1Z_MAGIC = Uint8Array.from([0x43, 0x31, 0x5a, 0x46, 0x00]); // "C1ZF\0"

export const TABLES = `
create table v1_resource_types (
    id integer primary key,
    external_id text not null,
    data blob not null,
    sync_id text not null,
    discovered_at datetime not null
);
create table v1_resources (
    id integer primary key,
    resource_type_id text not null,
    external_id text not null,
    parent_resource_type_id text,
    parent_resource_id text,
    data blob not null,
    sync_id text not null,
    discovered_at datetime not null
);
create table v1_entitlements (
    id integer primary key,
    resource_type_id text not null,
    resource_id text not null,
    external_id text not null,
    data blob not null,
    sync_id text not null,
    discovered_at datetime not null
);
create table v1_grants (
    id integer primary key,
    resource_type_id text not null,
    resource_id text not null,
    entitlement_id text not null,
    principal_resource_type_id text not null,
    principal_resource_id text not null,
    external_id text not null,
    expansion blob,
    needs_expansion integer not null default 0,
    data blob not null,
    sync_id text not null,
    discovered_at datetime not null
);
create table v1_sync_runs (
    id integer primary key,
    sync_id text not null,
    started_at datetime not null,
    ended_at datetime,
    sync_token text not null,
    sync_type text not null default 'full',
    parent_sync_id text not null default '',
    linked_sync_id text not null default '',
    supports_diff integer not null default 0,
    grants_backfilled integer not null default 0,
    stats text,
    ingest_invariant_generation text not null default '',
    ingest_invariant_coverage text not null default '',
    ingest_invariant_mode text not null default ''
);
create table v1_assets (
    id integer primary key,
    external_id text not null,
    content_type text not null,
    data blob not null,
    sync_id text not null,
    discovered_at datetime not null
);
create table v1_connector_sessions (
    id integer primary key,
    sync_id text not null,
    key text not null,
    value blob not null
);`;

/**
 * Created with the tables, before any row: the SQLite of the export sorts in memory only
 * (`TempDatabase`), so an index built over rows already in would hold them all in memory.
 */
export const INDEXES = `
create unique index idx_resource_types_external_sync_v1 on v1_resource_types (external_id, sync_id);
create index idx_resources_resource_type_id_v1 on v1_resources (resource_type_id);
create index idx_resources_external_sync_v1 on v1_resources (parent_resource_type_id, parent_resource_id);
create unique index idx_resources_parent_resource_id_v1 on v1_resources (external_id, sync_id);
create index idx_entitlements_resource_id_v1 on v1_entitlements (resource_type_id, resource_id);
create unique index idx_entitlements_external_sync_v1 on v1_entitlements (external_id, sync_id);
create index idx_grants_resource_type_id_resource_id_v1 on v1_grants (resource_type_id, resource_id);
create index idx_grants_principal_id_v1 on v1_grants (principal_resource_type_id, principal_resource_id);
create index idx_grants_entitlement_id_principal_id_v1 on v1_grants (entitlement_id, principal_resource_type_id, principal_resource_id);
create unique index idx_grants_external_sync_v1 on v1_grants (external_id, sync_id);
create index idx_grants_entitlement_sync_grant_v1 on v1_grants (entitlement_id, sync_id, id);
create index idx_grants_sync_expansion_v1 on v1_grants (sync_id) where expansion is not null;
create index idx_grants_sync_needs_expansion_v1 on v1_grants (sync_id) where needs_expansion = 1;
create unique index idx_sync_runs_sync_id_v1 on v1_sync_runs (sync_id);
create unique index idx_assets_external_sync_v1 on v1_assets (external_id, sync_id);
create unique index idx_session_store_sync_key_v1 on v1_connector_sessions (sync_id, key);`;

/** A record's row is `or ignore`d when a unique index holds its key already: a record twice (`changes` 0). */
export const INSERT = {
  resource_type:
    "insert or ignore into v1_resource_types (external_id, data, sync_id, discovered_at) values (?, ?, ?, ?)",
  resource:
    "insert or ignore into v1_resources (resource_type_id, external_id, parent_resource_type_id, parent_resource_id, data, sync_id, discovered_at) values (?, ?, null, null, ?, ?, ?)",
  entitlement:
    "insert or ignore into v1_entitlements (resource_type_id, resource_id, external_id, data, sync_id, discovered_at) values (?, ?, ?, ?, ?, ?)",
  grant:
    "insert or ignore into v1_grants (resource_type_id, resource_id, entitlement_id, principal_resource_type_id, principal_resource_id, external_id, expansion, needs_expansion, data, sync_id, discovered_at) values (?, ?, ?, ?, ?, ?, null, 0, ?, ?, ?)",
  /** A new sync needs no grant backfill: baton's insertSyncRunWithLink sets grants_backfilled 1. */
  sync_run:
    "insert into v1_sync_runs (sync_id, started_at, ended_at, sync_token, sync_type, grants_backfilled) values (?, ?, ?, '', 'full', 1)",
} as const;

/** An ISO 8601 instant in baton's timestamp layout, in UTC: `2026-11-21 10:00:00.5`. */
export function batonTime(iso: string): string {
  const text = new Date(iso).toISOString(); // 2026-11-21T10:00:00.500Z
  const [date, time = ""] = text.slice(0, -1).split("T");
  const [whole, fraction = ""] = time.split(".");
  const digits = fraction.replace(/0+$/, "");
  return `${date} ${whole}${digits ? `.${digits}` : ""}`;
}
