import {
  assignmentEntitlement,
  compactProfile,
  type EntitlementRecord,
  entitlementId,
  type GrantRecord,
  grant,
  type ResourceRecord,
  type ResourceTypeRecord,
  type SnapshotRecord,
} from "../../snapshot";
import { isActive, memberTypeOf, type ScimUser } from "./models";

export const RESOURCE_TYPES: ResourceTypeRecord[] = [
  { kind: "resource_type", id: "user", displayName: "User", traits: ["user"] },
  { kind: "resource_type", id: "member_type", displayName: "Member type", traits: ["role"] },
];

const memberTypeEntitlementId = (memberType: string) =>
  entitlementId({ type: "member_type", id: memberType }, "assigned");

/** `member_type:owner:assigned` -> `owner`; undefined for any other shape. */
export function memberTypeFromEntitlementId(id: string): string | undefined {
  return /^member_type:([^:]+):assigned$/.exec(id)?.[1];
}

const titleCase = (value: string) => value.charAt(0).toUpperCase() + value.slice(1);

export function memberTypeRecords(memberType: string): [ResourceRecord, EntitlementRecord] {
  return [
    { kind: "resource", type: "member_type", id: memberType, displayName: titleCase(memberType) },
    assignmentEntitlement(
      { type: "member_type", id: memberType },
      "assigned",
      `${titleCase(memberType)} member type`,
    ),
  ];
}

export function userResource(user: ScimUser): ResourceRecord {
  const givenName = user.name?.givenName ?? undefined;
  const familyName = user.name?.familyName ?? undefined;
  const emails = user.emails?.length ? user.emails.map((e) => e.value) : [user.userName];
  const profile = compactProfile({
    externalId: user.externalId,
    created: user.meta?.created,
    lastModified: user.meta?.lastModified,
  });
  return {
    kind: "resource",
    type: "user",
    id: user.id,
    displayName: [givenName, familyName].filter(Boolean).join(" ") || user.userName,
    status: isActive(user) ? "enabled" : "disabled",
    user: {
      login: user.userName,
      emails,
      ...(givenName ? { givenName } : {}),
      ...(familyName ? { familyName } : {}),
    },
    ...(profile ? { profile } : {}),
  };
}

/** A user's records: the user, then its member type grant (see `parseEach` on page closures). */
export function userRecords(user: ScimUser): SnapshotRecord[] {
  return [userResource(user), ...userMemberTypeGrant(user)];
}

/** A user holds exactly one member type: one grant, when the type is given. */
export function userMemberTypeGrant(user: ScimUser): GrantRecord[] {
  const memberType = memberTypeOf(user);
  return memberType
    ? [grant(memberTypeEntitlementId(memberType), { type: "user", id: user.id })]
    : [];
}
