import * as z from "zod";

/**
 * The records of a snapshot (docs/snapshot-format.md): the types the writer writes, and the schema
 * every reader parses them with. Every id is a string.
 */

export const SNAPSHOT_VERSION = 1;

export type Trait = "user" | "group" | "role";

export interface ResourceRef {
  type: string;
  id: string;
}

export interface ResourceTypeRecord {
  kind: "resource_type";
  id: string;
  displayName: string;
  traits: Trait[];
}

export interface UserTrait {
  login: string;
  emails: string[];
  givenName?: string;
  familyName?: string;
}

export interface ResourceRecord {
  kind: "resource";
  type: string;
  id: string;
  displayName: string;
  /** Users only. */
  status?: "enabled" | "disabled";
  user?: UserTrait;
  profile?: Record<string, string | number | boolean>;
}

export interface EntitlementRecord {
  kind: "entitlement";
  id: string;
  resource: ResourceRef;
  slug: string;
  displayName: string;
  purpose: "assignment" | "permission";
  grantableTo: string[];
}

export interface GrantRecord {
  kind: "grant";
  id: string;
  entitlement: string;
  principal: ResourceRef;
}

/** The records a job yields; `sync_start` and `sync_end` belong to the writer. */
export type SnapshotRecord = ResourceTypeRecord | ResourceRecord | EntitlementRecord | GrantRecord;
export type RecordKind = SnapshotRecord["kind"];

export interface SyncStartRecord {
  kind: "sync_start";
  syncId: string;
  connector: string;
  startedAt: string;
  version: typeof SNAPSHOT_VERSION;
}

export interface SyncEndRecord {
  kind: "sync_end";
  syncId: string;
  status: "complete";
  finishedAt: string;
  counts: Record<RecordKind, number>;
  skipped: { dangling_grant: number };
}

/** An item's id: for `items.map(idOf)`, one function rather than a closure made for each page. */
export const idOf = (item: { id: string }): string => item.id;

export function grant(entitlement: string, principal: ResourceRef): GrantRecord {
  return {
    kind: "grant",
    id: `${entitlement}:${principal.type}:${principal.id}`,
    entitlement,
    principal,
  };
}

/** The id of an entitlement: `{type}:{id}:{slug}`, e.g. `team:7:member`. */
export function entitlementId(resource: ResourceRef, slug: string): string {
  return `${resource.type}:${resource.id}:${slug}`;
}

/** An entitlement users are assigned to, on the resource. */
export function assignmentEntitlement(
  resource: ResourceRef,
  slug: string,
  displayName: string,
): EntitlementRecord {
  return {
    kind: "entitlement",
    id: entitlementId(resource, slug),
    resource,
    slug,
    displayName,
    purpose: "assignment",
    grantableTo: ["user"],
  };
}

/**
 * Drops undefined, null and empty-string values, so optional upstream fields stay out; the rest
 * keep their order. Undefined when nothing is left.
 */
export function compactProfile(
  fields: Record<string, string | number | boolean | null | undefined>,
): Record<string, string | number | boolean> | undefined {
  let profile: Record<string, string | number | boolean> | undefined;
  // for-in, not Object.entries: no array of pairs a record (36 MB of garbage at 100,000 users).
  for (const key in fields) {
    if (!Object.hasOwn(fields, key)) continue;
    const value = fields[key];
    if (value === undefined || value === null || value === "") continue;
    profile ??= {};
    profile[key] = value;
  }
  return profile;
}

/**
 * One line of a snapshot, as read: every field the format defines, required where the writer
 * always writes it (the types above), optional where it may leave it out. The one schema every
 * reader parses with (the removal guard, `diff`, `export`, `explore`), so all of them accept the
 * same files. Fields the format does not define are kept, not refused (`looseObject`): a reader
 * takes what it knows.
 */
const ref = z.looseObject({ type: z.string(), id: z.string() });

export const snapshotLine = z.discriminatedUnion("kind", [
  z.looseObject({
    kind: z.literal("sync_start"),
    syncId: z.string(),
    connector: z.string(),
    startedAt: z.string(),
    version: z.literal(1),
  }),
  z.looseObject({
    kind: z.literal("resource_type"),
    id: z.string(),
    displayName: z.string(),
    traits: z.array(z.enum(["user", "group", "role"])),
  }),
  z.looseObject({
    kind: z.literal("resource"),
    type: z.string(),
    id: z.string(),
    displayName: z.string(),
    status: z.enum(["enabled", "disabled"]).optional(),
    user: z
      .looseObject({
        login: z.string(),
        emails: z.array(z.string()),
        givenName: z.string().optional(),
        familyName: z.string().optional(),
      })
      .optional(),
    profile: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  }),
  z.looseObject({
    kind: z.literal("entitlement"),
    id: z.string(),
    resource: ref,
    slug: z.string(),
    displayName: z.string(),
    purpose: z.enum(["assignment", "permission"]),
    grantableTo: z.array(z.string()),
  }),
  z.looseObject({
    kind: z.literal("grant"),
    id: z.string(),
    entitlement: z.string(),
    principal: ref,
  }),
  z.looseObject({
    kind: z.literal("sync_end"),
    syncId: z.string(),
    status: z.literal("complete"),
    finishedAt: z.string(),
    counts: z.looseObject({
      resource_type: z.number(),
      resource: z.number(),
      entitlement: z.number(),
      grant: z.number(),
    }),
    skipped: z.looseObject({ dangling_grant: z.number() }),
  }),
]);

export type SnapshotLine = z.output<typeof snapshotLine>;
export type SyncStartLine = Extract<SnapshotLine, { kind: "sync_start" }>;
export type SyncEndLine = Extract<SnapshotLine, { kind: "sync_end" }>;
export type ResourceTypeLine = Extract<SnapshotLine, { kind: "resource_type" }>;
export type ResourceLine = Extract<SnapshotLine, { kind: "resource" }>;
export type EntitlementLine = Extract<SnapshotLine, { kind: "entitlement" }>;
export type GrantLine = Extract<SnapshotLine, { kind: "grant" }>;
/** The lines between `sync_start` and `sync_end`: the records a sync's jobs yield. */
export type BodyLine = Exclude<SnapshotLine, { kind: "sync_start" | "sync_end" }>;

/**
 * What identifies a record in one snapshot, as every reader names it: a resource by `{type}:{id}`,
 * the others by their `id`. `hashKey` is the same identity with no ambiguity (a type may hold `:`).
 */
export function recordIdentity(line: BodyLine): { key: string; hashKey: string } {
  if (line.kind === "resource")
    return { key: `${line.type}:${line.id}`, hashKey: userKey(line.type, line.id) };
  return { key: line.id, hashKey: line.id };
}

/**
 * The schema and the writer's types agree, both ways (`tsc` fails when a field is added to one
 * and not the other): what the writer writes parses, and what parses is what the writer writes.
 */
type Known<T> = T extends readonly (infer E)[]
  ? Known<E>[]
  : T extends object
    ? { [K in keyof T as string extends K ? never : K]: Known<T[K]> }
    : T;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const writerAgrees: [
  Same<Known<SyncStartLine>, Known<SyncStartRecord>>,
  Same<Known<ResourceTypeLine>, Known<ResourceTypeRecord>>,
  Same<Known<ResourceLine>, Known<ResourceRecord>>,
  Same<Known<EntitlementLine>, Known<EntitlementRecord>>,
  Same<Known<GrantLine>, Known<GrantRecord>>,
  Same<Known<SyncEndLine>, Known<SyncEndRecord>>,
] = [true, true, true, true, true, true];

/**
 * The key of a resource: its type and id, which together identify it. The guard hashes it (a
 * stored digest depends on it: never change it) and `diff` sorts by it.
 */
export function userKey(type: string, id: string): string {
  return `${type}\u0000${id}`;
}

/** A user: a resource with the user trait's fields (`user`), which the connectors set on every principal. */
export function isUser(line: { user?: unknown }): boolean {
  return line.user !== undefined;
}
