import {
  assignmentEntitlement,
  compactProfile,
  type EntitlementRecord,
  entitlementId,
  type GrantRecord,
  grant,
  type ResourceRecord,
  type ResourceTypeRecord,
} from "../../sync";
import type { Role, Team, User } from "./models";

export const RESOURCE_TYPES: ResourceTypeRecord[] = [
  { kind: "resource_type", id: "user", displayName: "User", traits: ["user"] },
  { kind: "resource_type", id: "team", displayName: "Team", traits: ["group"] },
  { kind: "resource_type", id: "role", displayName: "Role", traits: ["role"] },
];

const teamMemberEntitlementId = (teamId: string) =>
  entitlementId({ type: "team", id: teamId }, "member");
const roleAssignedEntitlementId = (roleId: string) =>
  entitlementId({ type: "role", id: roleId }, "assigned");

export function userResource(user: User): ResourceRecord {
  const name = [user.firstName, user.lastName].filter(Boolean).join(" ");
  const givenName = user.firstName ?? undefined;
  const familyName = user.lastName ?? undefined;
  const profile = compactProfile({
    jobTitle: user.jobTitle,
    timeZoneId: user.timeZoneId,
    phoneNumber: user.phoneNumber,
    lastUpdated: user.lastUpdated,
  });
  return {
    kind: "resource",
    type: "user",
    id: user.id,
    displayName: user.fullName || name || user.loginId,
    status: user.isActive === false ? "disabled" : "enabled",
    user: {
      login: user.loginId,
      emails: user.email ? [user.email] : [],
      ...(givenName ? { givenName } : {}),
      ...(familyName ? { familyName } : {}),
    },
    ...(profile ? { profile } : {}),
  };
}

/** The user's role assignments: `defaultRoleId` and any `roles`, each once. */
export function userRoleGrants(user: User): GrantRecord[] {
  const roleIds = new Set<string>();
  if (user.defaultRoleId) roleIds.add(user.defaultRoleId);
  for (const role of user.roles ?? []) roleIds.add(typeof role === "string" ? role : role.id);
  return [...roleIds].map((roleId) =>
    grant(roleAssignedEntitlementId(roleId), { type: "user", id: user.id }),
  );
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

export function teamMembershipGrant(teamId: string, userId: string): GrantRecord {
  return grant(teamMemberEntitlementId(teamId), { type: "user", id: userId });
}
