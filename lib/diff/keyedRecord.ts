import { type BodyLine, isUser, userKey } from "../snapshot/records";
import { escapeLine, type RunCodec, unescapeLine } from "../sortedRuns/runs";

/** The kinds of record `diff` compares (resource types are the connector's, not the tenant's). */
export type DiffKind = "resource" | "entitlement" | "grant";

/** What `diff` compares of a resource: a change of any of them makes it `changed`. */
export interface ResourceFields {
  displayName?: string;
  status?: "enabled" | "disabled";
  login?: string;
  emails?: string[];
}
export const RESOURCE_FIELDS = ["displayName", "status", "login", "emails"] as const;
export type ResourceField = (typeof RESOURCE_FIELDS)[number];

/**
 * One record as `diff` sorts and compares it. `key` orders records: resources first (by type,
 * then id: the guard's `userKey`), then entitlements, then grants by entitlement and id (so the
 * grants of one entitlement come together); within a kind the key is the record's identity.
 */
export interface KeyedRecord {
  key: string;
  kind: DiffKind;
  /** As `diff` prints it: `{type}:{id}` for a resource, the snapshot `id` otherwise. */
  id: string;
  /** A resource with the user trait: an account (the guard's users). */
  account?: true;
  /** A resource's compared fields. */
  fields?: ResourceFields;
  /** An entitlement's display name; a grant's entitlement id. */
  label?: string;
}

const KIND_RANK: Record<DiffKind, string> = { resource: "1", entitlement: "2", grant: "3" };

/** The keyed record of a snapshot line, or undefined for a line `diff` does not compare. */
export function keyedRecord(line: BodyLine): KeyedRecord | undefined {
  switch (line.kind) {
    case "resource": {
      const fields: ResourceFields = { displayName: line.displayName, status: line.status };
      if (line.user) {
        fields.login = line.user.login;
        fields.emails = line.user.emails;
      }
      return {
        key: KIND_RANK.resource + userKey(line.type, line.id),
        kind: "resource",
        id: `${line.type}:${line.id}`,
        ...(isUser(line) ? { account: true } : {}),
        fields,
      };
    }
    case "entitlement":
      return {
        key: KIND_RANK.entitlement + line.id,
        kind: "entitlement",
        id: line.id,
        label: line.displayName,
      };
    case "grant": {
      const entitlement = line.entitlement;
      return {
        key: `${KIND_RANK.grant}${entitlement}\u0000${line.id}`,
        kind: "grant",
        id: line.id,
        label: entitlement,
      };
    }
    default:
      return undefined;
  }
}

/**
 * A keyed record as one line of a sorted run. A grant (most of a snapshot) is its key alone, its
 * entitlement and id are in it, as text with `\` and line breaks escaped (`3...`); the others
 * are a JSON array holding what the key does not (`[...`).
 */
export function encodeRecord(record: KeyedRecord): string {
  switch (record.kind) {
    case "grant":
      return escapeLine(record.key);
    case "entitlement":
      return JSON.stringify([record.key, record.label ?? null]);
    default: {
      const f = record.fields ?? {};
      const { displayName = null, status = null, login = null, emails = null } = f;
      return JSON.stringify([
        record.key,
        record.account ? 1 : 0,
        displayName,
        status,
        login,
        emails,
      ]);
    }
  }
}

const KIND_OF_RANK: Record<string, DiffKind> = { 1: "resource", 2: "entitlement", 3: "grant" };

/** The keyed record of a line `encodeRecord` wrote. */
export function decodeRecord(line: string): KeyedRecord {
  if (line[0] === KIND_RANK.grant) {
    const key = unescapeLine(line);
    const separator = key.indexOf("\u0000");
    return { key, kind: "grant", id: key.slice(separator + 1), label: key.slice(1, separator) };
  }
  const values = JSON.parse(line) as [string, ...unknown[]];
  const key = values[0];
  const kind = KIND_OF_RANK[key[0] as string] as DiffKind;
  const separator = key.indexOf("\u0000");
  if (kind === "entitlement")
    return { key, kind, id: key.slice(1), label: (values[1] as string | null) ?? undefined };
  const [, account, displayName, status, login, emails] = values as [
    string,
    number,
    string | null,
    ResourceFields["status"] | null,
    string | null,
    string[] | null,
  ];
  const fields: ResourceFields = {};
  if (displayName !== null) fields.displayName = displayName;
  if (status !== null) fields.status = status;
  if (login !== null) fields.login = login;
  if (emails !== null) fields.emails = emails;
  return {
    key,
    kind,
    id: `${key.slice(1, separator)}:${key.slice(separator + 1)}`,
    ...(account === 1 ? { account: true } : {}),
    fields,
  };
}

/** How a keyed record is one line of a sorted run. */
export const KEYED_RECORD_CODEC: RunCodec<KeyedRecord> = {
  encode: encodeRecord,
  decode: decodeRecord,
};

export type FieldChanges = Partial<Record<ResourceField, { before: unknown; after: unknown }>>;

/** The fields that differ between two versions of a resource, or undefined when none does. */
export function fieldChanges(
  before: ResourceFields = {},
  after: ResourceFields = {},
): FieldChanges | undefined {
  let changes: FieldChanges | undefined;
  for (const field of RESOURCE_FIELDS) {
    const was = before[field];
    const is = after[field];
    if (sameValue(was, is)) continue;
    changes ??= {};
    changes[field] = { before: was ?? null, after: is ?? null };
  }
  return changes;
}

/** Equal values; two lists of emails are equal when they hold the same addresses in any order. */
function sameValue(a: unknown, b: unknown): boolean {
  if (!Array.isArray(a) || !Array.isArray(b)) return a === b;
  if (a.length !== b.length) return false;
  const sortedB = [...b].sort();
  return [...a].sort().every((value, i) => value === sortedB[i]);
}
