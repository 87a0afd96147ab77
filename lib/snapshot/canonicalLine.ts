import type { GrantLine, SnapshotLine } from "./records";

/**
 * A grant's line read without `JSON.parse` (seven in ten lines of a snapshot, parsed ten times
 * faster so) when it is in the writer's exact form: its four strings hold no quote, backslash or control
 * character, so each is its own value, and the record is what `JSON.parse` and then `snapshotLine`
 * would give. Else undefined, and the line is parsed.
 */
export function grantLine(text: string): GrantLine | undefined {
  const m = GRANT_LINE.exec(text);
  if (!m) return undefined;
  return {
    kind: "grant",
    id: m[1] as string,
    entitlement: m[2] as string,
    principal: { type: m[3] as string, id: m[4] as string },
  };
}

const STRING = String.raw`"([^"\\\x00-\x1f]*)"`;
const GRANT_LINE = new RegExp(
  String.raw`^\{"kind":"grant","id":${STRING},"entitlement":${STRING},"principal":\{"type":${STRING},"id":${STRING}\}\}$`,
);

/** How the writer's grant and resource lines start: the others are not looked at for a fast read. */
export const GRANT_START = '{"kind":"grant",';
export const RESOURCE_START = '{"kind":"resource",';

/** What the snapshot's writer reads of a resource: its identity, and whether it is a user. */
export interface ResourceKey {
  kind: "resource";
  type: string;
  id: string;
  user: true | undefined;
}

/**
 * A resource's line in the exact form `JSON.stringify` writes, read without `JSON.parse`: its
 * type, id and user trait, when the line is the writer's fields in its order (records.ts), every
 * string without a quote, backslash or control character, and its profile's values strings under
 * distinct keys that start with no digit (so no key is an array index, which JSON.parse would move
 * first). Such a line is then its own `JSON.stringify(JSON.parse(line))`. Else undefined, and the
 * line is parsed.
 */
export function resourceLine(text: string): ResourceKey | undefined {
  const m = RESOURCE_LINE.exec(text);
  if (!m) return undefined;
  const profile = m[4];
  if (profile !== undefined && !distinctKeys(profile)) return undefined;
  return {
    kind: "resource",
    type: m[1] as string,
    id: m[2] as string,
    user: m[3] === undefined ? undefined : true,
  };
}

const VALUE = String.raw`"[^"\\\x00-\x1f]*"`;
const KEY = String.raw`"(?!__proto__")[^"\\\x00-\x1f0-9][^"\\\x00-\x1f]*"`;
const RESOURCE_LINE = new RegExp(
  String.raw`^\{"kind":"resource","type":${STRING},"id":${STRING},"displayName":${VALUE}` +
    `(?:,"status":"(?:enabled|disabled)")?` +
    String.raw`(,"user":\{"login":${VALUE},"emails":\[(?:${VALUE}(?:,${VALUE})*)?\]` +
    String.raw`(?:,"givenName":${VALUE})?(?:,"familyName":${VALUE})?\})?` +
    String.raw`(?:,"profile":\{((?:${KEY}:${VALUE})(?:,${KEY}:${VALUE})*)?\})?\}$`,
);

/**
 * Whether the keys of a profile's text (`"k":"v","k":"v"`, no quote inside a key or value) are
 * distinct; a profile holds a few, so each is looked for among those before it.
 */
function distinctKeys(profile: string): boolean {
  const starts: number[] = [];
  for (let at = 0; at < profile.length; ) {
    const end = profile.indexOf('"', at + 1); // the key's closing quote
    const key = profile.slice(at, end + 1);
    for (const start of starts) if (profile.startsWith(key, start)) return false;
    starts.push(at);
    at = profile.indexOf('"', profile.indexOf('"', end + 2) + 1) + 2; // past the value, and `,`
    if (at === 1) break;
  }
  return true;
}

/**
 * A record line (JSON as parsed) in the very form `snapshotLine` gives back, else undefined: then
 * zod decides, and says what is wrong. It accepts only a subset of what the schema accepts: a
 * resource type, resource, entitlement or grant whose fields are the schema's, of its types, in
 * its order, optional ones absent or present and nothing else (zod's output puts the fields in
 * that order, extra ones after, and drops a `__proto__` key, so the line is then its own output).
 * The writer writes every record so: most lines cost no zod parse (a third of the reader's CPU;
 * test/snapshot/canonicalLine.test.ts checks the subset and the sameness).
 */
export function canonicalLine(json: unknown): SnapshotLine | undefined {
  if (!isObject(json)) return undefined;
  switch (json.kind) {
    case "grant":
      return fields(json, GRANT) && isRef(json.principal) ? (json as SnapshotLine) : undefined;
    case "resource":
      return fields(json, RESOURCE) &&
        (json.status === undefined || json.status === "enabled" || json.status === "disabled") &&
        (json.user === undefined || isUser(json.user)) &&
        (json.profile === undefined || isProfile(json.profile))
        ? (json as SnapshotLine)
        : undefined;
    case "entitlement":
      return fields(json, ENTITLEMENT) &&
        isRef(json.resource) &&
        (json.purpose === "assignment" || json.purpose === "permission") &&
        isStrings(json.grantableTo)
        ? (json as SnapshotLine)
        : undefined;
    case "resource_type":
      return fields(json, RESOURCE_TYPE) &&
        Array.isArray(json.traits) &&
        json.traits.every((t) => t === "user" || t === "group" || t === "role")
        ? (json as SnapshotLine)
        : undefined;
    default:
      return undefined;
  }
}

/** An object's fields by name, in order: `string` ones must be strings, `optional` ones may be absent. */
type Shape = readonly (readonly [name: string, kind: "string" | "any" | "optional"])[];

const GRANT: Shape = [
  ["kind", "any"],
  ["id", "string"],
  ["entitlement", "string"],
  ["principal", "any"],
];
const RESOURCE: Shape = [
  ["kind", "any"],
  ["type", "string"],
  ["id", "string"],
  ["displayName", "string"],
  ["status", "optional"],
  ["user", "optional"],
  ["profile", "optional"],
];
const ENTITLEMENT: Shape = [
  ["kind", "any"],
  ["id", "string"],
  ["resource", "any"],
  ["slug", "string"],
  ["displayName", "string"],
  ["purpose", "any"],
  ["grantableTo", "any"],
];
const RESOURCE_TYPE: Shape = [
  ["kind", "any"],
  ["id", "string"],
  ["displayName", "string"],
  ["traits", "any"],
];
const REF: Shape = [
  ["type", "string"],
  ["id", "string"],
];
const USER: Shape = [
  ["login", "string"],
  ["emails", "any"],
  ["givenName", "optional"],
  ["familyName", "optional"],
];

/**
 * Whether `o`'s own keys are exactly `shape`'s names in its order (optional ones may be left
 * out), and its `string` fields strings. Others are checked by the caller.
 */
function fields(o: Record<string, unknown>, shape: Shape): boolean {
  let i = 0;
  for (const key in o) {
    while (i < shape.length && (shape[i] as Shape[number])[0] !== key) {
      if ((shape[i] as Shape[number])[1] !== "optional") return false;
      i++;
    }
    if (i === shape.length) return false;
    if ((shape[i] as Shape[number])[1] === "string" && typeof o[key] !== "string") return false;
    i++;
  }
  for (; i < shape.length; i++) if ((shape[i] as Shape[number])[1] !== "optional") return false;
  return true;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const isRef = (value: unknown) => isObject(value) && fields(value, REF);

const isStrings = (value: unknown) =>
  Array.isArray(value) && value.every((s) => typeof s === "string");

function isUser(value: unknown): boolean {
  return (
    isObject(value) &&
    fields(value, USER) &&
    isStrings(value.emails) &&
    (value.givenName === undefined || typeof value.givenName === "string") &&
    (value.familyName === undefined || typeof value.familyName === "string")
  );
}

function isProfile(value: unknown): boolean {
  if (!isObject(value)) return false;
  for (const key in value) {
    const v = value[key];
    const t = typeof v;
    if (key === "__proto__" || (t !== "string" && t !== "number" && t !== "boolean")) return false;
  }
  return true;
}
