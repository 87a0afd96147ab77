import { writeFile } from "node:fs/promises";
import { gzipSync } from "node:zlib";

/**
 * A small BlackLine-shaped snapshot for the export tests: users (one disabled, one without an
 * email, names a spreadsheet would read as formulas or that need CSV quoting), two teams, a role,
 * their entitlements and grants, in the order a sync writes them (types first, grants last).
 */
export function fixtureLines(): object[] {
  const users = [
    {
      id: "1042",
      name: "Ada Lovelace",
      login: "ada@example.com",
      emails: ["ada@example.com", "ada@old.example.com"],
    },
    {
      id: "7",
      name: '=HYPERLINK("http://x","click")',
      login: "eve@example.com",
      emails: ["eve@example.com"],
    },
    {
      id: "8",
      name: 'Smith, "Bob"\nJr.',
      login: "+bob",
      emails: ["bob@example.com"],
      status: "disabled",
    },
    { id: "9", name: "-Ops bot", login: "@ops", emails: [] },
    { id: "10", name: "Zoë Ünïcode", login: "zoe@example.com", emails: ["zoe@example.com"] },
  ];
  const lines: object[] = [
    {
      kind: "sync_start",
      syncId: "sync-1",
      connector: "blackline",
      startedAt: "2026-11-21T10:00:00Z",
      version: 1,
    },
    { kind: "resource_type", id: "user", displayName: "User", traits: ["user"] },
    { kind: "resource_type", id: "team", displayName: "Team", traits: ["group"] },
    { kind: "resource_type", id: "role", displayName: "Role", traits: ["role"] },
  ];
  for (const u of users) {
    lines.push({
      kind: "resource",
      type: "user",
      id: u.id,
      displayName: u.name,
      status: u.status ?? "enabled",
      user: { login: u.login, emails: u.emails, givenName: "Given", familyName: "Family" },
      profile: { jobTitle: "Controller", level: 3, admin: false },
    });
  }
  lines.push(
    { kind: "resource", type: "team", id: "7", displayName: "EMEA Close" },
    { kind: "resource", type: "team", id: "8", displayName: "APAC, Close" },
    { kind: "resource", type: "role", id: "1", displayName: "System Admin" },
  );
  const entitlements = [
    {
      id: "team:7:member",
      resource: { type: "team", id: "7" },
      slug: "member",
      displayName: "EMEA Close member",
    },
    {
      id: "team:8:member",
      resource: { type: "team", id: "8" },
      slug: "member",
      displayName: "APAC, Close member",
    },
    {
      id: "role:1:assigned",
      resource: { type: "role", id: "1" },
      slug: "assigned",
      displayName: "System Admin assigned",
    },
  ];
  for (const e of entitlements)
    lines.push({ kind: "entitlement", ...e, purpose: "assignment", grantableTo: ["user"] });
  const grants: [string, string][] = [
    ["team:7:member", "1042"],
    ["team:7:member", "7"],
    ["team:8:member", "8"],
    ["team:8:member", "9"],
    ["role:1:assigned", "1042"],
    ["role:1:assigned", "10"],
  ];
  for (const [entitlement, user] of grants)
    lines.push({
      kind: "grant",
      id: `${entitlement}:user:${user}`,
      entitlement,
      principal: { type: "user", id: user },
    });
  lines.push({
    kind: "sync_end",
    syncId: "sync-1",
    status: "complete",
    finishedAt: "2026-11-21T10:05:30.250Z",
    counts: { resource_type: 3, resource: users.length + 3, entitlement: 3, grant: grants.length },
    skipped: { dangling_grant: 0 },
  });
  return lines;
}

export function jsonLinesText(lines: readonly object[]): string {
  return lines.map((line) => `${JSON.stringify(line)}\n`).join("");
}

/** Writes `lines` to `path`, gzip-compressed when `path` ends in `.gz`. */
export async function writeSnapshot(path: string, lines: readonly object[]): Promise<void> {
  const text = jsonLinesText(lines);
  await writeFile(path, path.endsWith(".gz") ? gzipSync(text) : text);
}
