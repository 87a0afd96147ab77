import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import type {
  EntitlementRecord,
  GrantRecord,
  ResourceRecord,
  ResourceRef,
  ResourceTypeRecord,
  Trait,
} from "../../snapshot/records";

/**
 * The protobuf encoding of a snapshot's records as baton's `c1.connector.v2` messages, the `data`
 * column of a c1z's tables. Field numbers and enum values are those of baton-sdk's .proto files at
 * commit e2bd8af9aa92983fba9fe6c0b9b41766f2283b5f (github.com/conductorone/baton-sdk):
 *   proto/c1/connector/v2/resource.proto: ResourceType, ResourceId, Resource, Status
 *   proto/c1/connector/v2/annotation_trait.proto: UserTrait (Email, Status, StructuredName),
 *     GroupTrait, RoleTrait
 *   proto/c1/connector/v2/entitlement.proto: Entitlement
 *   proto/c1/connector/v2/grant.proto: Grant
 * and google/protobuf any.proto and struct.proto. The test decodes these bytes with protobufjs
 * from a copy of those .proto files (test/export/proto), so a wrong number here fails there.
 * Traits go where baton's own `resource.WithUserTrait` puts them: a google.protobuf.Any in the
 * resource's `annotations`; the user's status both there and on the resource, as baton does.
 */

const LEN = WireType.LengthDelimited;
const VARINT = WireType.Varint;

/** ResourceType.Trait */
const TRAIT_NUMBER: Record<Trait, number> = { user: 1, group: 2, role: 3 };
/** UserTrait.Status.Status and Status.ResourceStatus share these numbers. */
const STATUS_NUMBER = { enabled: 1, disabled: 2 } as const;
/** Entitlement.PurposeValue */
const PURPOSE_NUMBER = { assignment: 1, permission: 2 } as const;
/** UserTrait.AccountType.ACCOUNT_TYPE_HUMAN: baton's default for a user. */
const ACCOUNT_TYPE_HUMAN = 1;

const TYPE_URL_PREFIX = "type.googleapis.com/c1.connector.v2.";

/** ResourceType { 1 id, 2 display_name, 3 repeated Trait traits (packed) } */
export function resourceTypeMessage(record: ResourceTypeRecord): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, LEN).string(record.id);
  if (record.displayName) w.tag(2, LEN).string(record.displayName);
  if (record.traits.length > 0) {
    w.tag(3, LEN).fork();
    for (const trait of record.traits) w.int32(TRAIT_NUMBER[trait]);
    w.join();
  }
  return w.finish();
}

/** ResourceId { 1 resource_type, 2 resource } as field `field` of the message `w` writes. */
function resourceId(w: BinaryWriter, field: number, ref: ResourceRef): void {
  w.tag(field, LEN).fork().tag(1, LEN).string(ref.type).tag(2, LEN).string(ref.id).join();
}

/** A Resource that only names one: Resource { 1 id }, as field `field`. */
function resourceRef(w: BinaryWriter, field: number, ref: ResourceRef): void {
  w.tag(field, LEN).fork();
  resourceId(w, 1, ref);
  w.join();
}

/** google.protobuf.Any { 1 type_url, 2 value } of a c1.connector.v2 message, as field `field`. */
function any(w: BinaryWriter, field: number, type: string, value: Uint8Array): void {
  w.tag(field, LEN)
    .fork()
    .tag(1, LEN)
    .string(TYPE_URL_PREFIX + type)
    .tag(2, LEN)
    .bytes(value);
  w.join();
}

/**
 * google.protobuf.Struct { 1 map<string, Value> fields }, Value { 2 number_value, 3 string_value,
 * 4 bool_value }, as field `field`.
 */
function struct(
  w: BinaryWriter,
  field: number,
  fields: Record<string, string | number | boolean>,
): void {
  w.tag(field, LEN).fork();
  for (const [key, value] of Object.entries(fields)) {
    w.tag(1, LEN).fork().tag(1, LEN).string(key).tag(2, LEN).fork();
    if (typeof value === "number") w.tag(2, WireType.Bit64).double(value);
    else if (typeof value === "string") w.tag(3, LEN).string(value);
    else w.tag(4, VARINT).bool(value);
    w.join().join();
  }
  w.join();
}

/**
 * UserTrait { 1 repeated Email emails (Email { 1 address, 2 is_primary }), 2 Status status
 * (Status { 1 status }), 5 account_type, 6 login, 12 StructuredName structured_name
 * (StructuredName { 1 given_name, 2 family_name }) }. The first email is the primary one.
 */
function userTrait(record: ResourceRecord): Uint8Array {
  const user = record.user;
  const w = new BinaryWriter();
  if (!user) return w.finish();
  user.emails.forEach((address, index) => {
    w.tag(1, LEN).fork().tag(1, LEN).string(address);
    if (index === 0) w.tag(2, VARINT).bool(true);
    w.join();
  });
  if (record.status) w.tag(2, LEN).fork().tag(1, VARINT).int32(STATUS_NUMBER[record.status]).join();
  w.tag(5, VARINT).int32(ACCOUNT_TYPE_HUMAN);
  if (user.login) w.tag(6, LEN).string(user.login);
  if (user.givenName || user.familyName) {
    w.tag(12, LEN).fork();
    if (user.givenName) w.tag(1, LEN).string(user.givenName);
    if (user.familyName) w.tag(2, LEN).string(user.familyName);
    w.join();
  }
  return w.finish();
}

const EMPTY = new Uint8Array(0);

/**
 * Resource { 1 ResourceId id, 3 display_name, 4 repeated Any annotations, 9 Struct profile,
 * 11 Status status (Status { 1 status }) }. `traits` are the resource type's: a user gets its
 * UserTrait, a group or a role an empty GroupTrait or RoleTrait, as baton's builders add them.
 */
export function resourceMessage(record: ResourceRecord, traits: readonly Trait[]): Uint8Array {
  const w = new BinaryWriter();
  resourceId(w, 1, record);
  if (record.displayName) w.tag(3, LEN).string(record.displayName);
  if (record.user || traits.includes("user")) any(w, 4, "UserTrait", userTrait(record));
  if (traits.includes("group")) any(w, 4, "GroupTrait", EMPTY);
  if (traits.includes("role")) any(w, 4, "RoleTrait", EMPTY);
  if (record.profile && Object.keys(record.profile).length > 0) struct(w, 9, record.profile);
  if (record.status)
    w.tag(11, LEN).fork().tag(1, VARINT).int32(STATUS_NUMBER[record.status]).join();
  return w.finish();
}

/**
 * Entitlement { 1 Resource resource, 2 id, 3 display_name, 5 repeated ResourceType grantable_to,
 * 7 PurposeValue purpose, 8 slug }. The resource and the grantable types are named by id.
 */
export function entitlementMessage(record: EntitlementRecord): Uint8Array {
  const w = new BinaryWriter();
  resourceRef(w, 1, record.resource);
  w.tag(2, LEN).string(record.id);
  if (record.displayName) w.tag(3, LEN).string(record.displayName);
  for (const type of record.grantableTo) w.tag(5, LEN).fork().tag(1, LEN).string(type).join();
  w.tag(7, VARINT).int32(PURPOSE_NUMBER[record.purpose]);
  if (record.slug) w.tag(8, LEN).string(record.slug);
  return w.finish();
}

/**
 * Grant { 1 Entitlement entitlement (its resource and id), 2 Resource principal (its id), 3 id }.
 * `entitlementResource` is the entitlement's resource, which the grant record does not carry.
 */
export function grantMessage(record: GrantRecord, entitlementResource: ResourceRef): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, LEN).fork();
  resourceRef(w, 1, entitlementResource);
  w.tag(2, LEN).string(record.entitlement);
  w.join();
  resourceRef(w, 2, record.principal);
  w.tag(3, LEN).string(record.id);
  return w.finish();
}
