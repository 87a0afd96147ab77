import * as z from "zod";
import type {
  EntitlementRecord,
  GrantRecord,
  ResourceRecord,
  ResourceTypeRecord,
  SyncEndRecord,
  SyncStartRecord,
} from "./records";

/**
 * One line of a snapshot (docs/snapshot-format.md), as lib/snapshot/records.ts writes it: every field
 * the format defines, required where the writer always writes it, optional where it may leave it
 * out. The one schema every reader parses with (the removal guard, `diff`, `export`, `explore`),
 * so all of them accept the same files. Fields the format does not define are kept, not refused
 * (`looseObject`): a reader takes what it knows.
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
export type RecordKind = BodyLine["kind"];

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
