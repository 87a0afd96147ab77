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
  type UserTrait,
} from "../../snapshot";
import type { Role, Team, User } from "./models";

export const RESOURCE_TYPES: ResourceTypeRecord[] = [
  { kind: "resource_type", id: "user", displayName: "User", traits: ["user"] },
  { kind: "resource_type", id: "team", displayName: "Team", traits: ["group"] },
  { kind: "resource_type", id: "role", displayName: "Role", traits: ["role"] },
];

/**
 * A team's member entitlement id, the last one kept: a membership page's grants all name one team,
 * so its id is built once a page, not once a grant.
 */
const teamMemberEntitlementId = lastOne((teamId: string) =>
  entitlementId({ type: "team", id: teamId }, "member"),
);
const roleAssignedEntitlementId = (roleId: string) =>
  entitlementId({ type: "role", id: roleId }, "assigned");

/** Keys in this order, optional ones only when set: a snapshot's bytes depend on it. */
export function userResource(user: User): ResourceRecord {
  const trait: UserTrait = {
    login: user.loginId,
    emails: user.email ? [user.email] : [],
  };
  if (user.firstName) trait.givenName = user.firstName;
  if (user.lastName) trait.familyName = user.lastName;
  const record: ResourceRecord = {
    kind: "resource",
    type: "user",
    id: user.id,
    displayName: user.fullName || joinedName(user) || user.loginId,
    status: user.isActive === false ? "disabled" : "enabled",
    user: trait,
  };
  const profile = compactProfile({
    jobTitle: user.jobTitle,
    timeZoneId: user.timeZoneId,
    phoneNumber: user.phoneNumber,
    lastUpdated: user.lastUpdated,
  });
  if (profile) record.profile = profile;
  return record;
}

const joinedName = (user: User) => [user.firstName, user.lastName].filter(Boolean).join(" ");

// A page's items go through functions of this module, not closures made for each page (see
// `parseEach` in lib/http/parseResponse.ts).

/** A user's records: the user, then its role assignments. */
export function userRecords(user: User): SnapshotRecord[] {
  return [userResource(user), ...userRoleGrants(user)];
}

/** The user's role assignments: `defaultRoleId` and any `roles`, each once, in that order. */
export function userRoleGrants(user: User): GrantRecord[] {
  const roleIds: string[] = user.defaultRoleId ? [user.defaultRoleId] : [];
  for (const role of user.roles ?? []) {
    const roleId = typeof role === "string" ? role : role.id;
    if (!roleIds.includes(roleId)) roleIds.push(roleId);
  }
  const principal = { type: "user", id: user.id };
  const grants: GrantRecord[] = [];
  for (const roleId of roleIds) grants.push(grant(roleAssignedEntitlementId(roleId), principal));
  return grants;
}

export function teamRecords(team: Team): [ResourceRecord, EntitlementRecord] {
  const profile = compactProfile({ uniqueCode: team.uniqueCode });
  return [
    {
      kind: "resource",
      type: "team",
      id: team.id,
      displayName: team.name,
      ...(profile ? { profile } : {}),
    },
    assignmentEntitlement({ type: "team", id: team.id }, "member", `${team.name} member`),
  ];
}

export function roleRecords(role: Role): [ResourceRecord, EntitlementRecord] {
  return [
    { kind: "resource", type: "role", id: role.id, displayName: role.name },
    assignmentEntitlement({ type: "role", id: role.id }, "assigned", `${role.name} assigned`),
  ];
}

/** `build` that returns its last answer again for the same argument. */
function lastOne(build: (id: string) => string): (id: string) => string {
  let lastId: string | undefined;
  let last = "";
  return (id) => {
    if (id !== lastId) {
      last = build(id);
      lastId = id;
    }
    return last;
  };
}

export function teamMembershipGrant(teamId: string, userId: string): GrantRecord {
  return grant(teamMemberEntitlementId(teamId), { type: "user", id: userId });
}

/**
 * The grants of a membership page: `ids` are the users of team `parentId` (side `team`), or the
 * teams of user `parentId` (side `user`).
 */
export function membershipGrants(
  side: "team" | "user",
  parentId: string,
  ids: readonly string[],
): GrantRecord[] {
  const grants: GrantRecord[] = new Array(ids.length);
  for (let at = 0; at < ids.length; at++) {
    const id = ids[at] as string;
    grants[at] =
      side === "team" ? teamMembershipGrant(parentId, id) : teamMembershipGrant(id, parentId);
  }
  return grants;
}
