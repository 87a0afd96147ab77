import { createWriteStream } from "node:fs";
import { finished } from "node:stream/promises";

const FIRST = [
  "Ada",
  "Grace",
  "Alan",
  "Edsger",
  "Barbara",
  "Donald",
  "Frances",
  "Ken",
  "Radia",
  "John",
  "Margaret",
  "Dennis",
];
const LAST = [
  "Lovelace",
  "Hopper",
  "Turing",
  "Dijkstra",
  "Liskov",
  "Knuth",
  "Allen",
  "Thompson",
  "Perlman",
  "Backus",
  "Hamilton",
  "Ritchie",
];

export interface FixtureOptions {
  users: number;
  teams?: number;
  roles?: number;
  /** "old": the earlier sync of the pair (some users, grants, an entitlement differ). */
  variant: "old" | "new";
}

/**
 * Writes a BlackLine-shaped complete snapshot (docs/snapshot-format.md), deterministic for its
 * options: users (every 20th disabled, every 50th without an email), teams and roles with their
 * entitlements, each user a role and three teams, and one role granted to team 0 (held through it).
 * The "old" variant differs from "new" in known ways: users `i % 97 === 1` are only new, users
 * `old-{i}` only old, users `i % 31 === 0` held another role, users `i % 89 === 2` were enabled,
 * role `r-new` is only new and team `t-gone` only old.
 */
export async function writeFixtureSnapshot(path: string, options: FixtureOptions): Promise<void> {
  const { users, variant } = options;
  const teams = options.teams ?? Math.max(3, Math.ceil(users / 100));
  const roles = options.roles ?? 12;
  const old = variant === "old";
  const out = createWriteStream(path);
  let chunk: string[] = [];
  const line = (value: unknown) => {
    chunk.push(JSON.stringify(value));
    if (chunk.length >= 2000) flush();
  };
  const flush = () => {
    out.write(`${chunk.join("\n")}\n`);
    chunk = [];
  };
  const counts = { resource_type: 3, resource: 0, entitlement: 0, grant: 0 };
  line({
    kind: "sync_start",
    syncId: `sync-${variant}`,
    connector: "blackline",
    startedAt: old ? "2026-11-14T10:00:00Z" : "2026-11-21T10:00:00Z",
    version: 1,
  });
  line({ kind: "resource_type", id: "user", displayName: "User", traits: ["user"] });
  line({ kind: "resource_type", id: "team", displayName: "Team", traits: ["group"] });
  line({ kind: "resource_type", id: "role", displayName: "Role", traits: ["role"] });
  const entitlement = (type: string, id: string, slug: string, name: string) => {
    counts.resource++;
    counts.entitlement++;
    line({ kind: "resource", type, id, displayName: name });
    line({
      kind: "entitlement",
      id: `${type}:${id}:${slug}`,
      resource: { type, id },
      slug,
      displayName: `${name} ${slug}`,
      purpose: "assignment",
      grantableTo: ["user"],
    });
  };
  const teamIds = Array.from({ length: teams }, (_, t) => `t${t}`);
  if (old) teamIds.push("t-gone");
  for (const id of teamIds)
    entitlement(
      "team",
      id,
      "member",
      id === "t-gone" ? "Legacy Close" : `Team ${id.slice(1)} Close`,
    );
  const roleIds = Array.from({ length: roles }, (_, r) => `r${r}`);
  if (!old) roleIds.push("r-new");
  for (const id of roleIds)
    entitlement("role", id, "assigned", id === "r-new" ? "Auditor" : `Role ${id.slice(1)}`);
  const grant = (entitlementId: string, type: string, id: string) => {
    counts.grant++;
    line({
      kind: "grant",
      id: `${entitlementId}:${type}:${id}`,
      entitlement: entitlementId,
      principal: { type, id },
    });
  };
  // Role 1 is granted to team 0: its members hold it through the team.
  grant("role:r1:assigned", "team", "t0");
  const user = (id: string, i: number) => {
    const first = FIRST[i % FIRST.length] as string;
    const last = LAST[Math.floor(i / FIRST.length) % LAST.length] as string;
    const login = `${first}.${last}${i}@example.com`.toLowerCase();
    const disabled = i % 20 === 19 && !(old && i % 89 === 2);
    const status = i % 89 === 2 && !old ? "disabled" : disabled ? "disabled" : "enabled";
    counts.resource++;
    line({
      kind: "resource",
      type: "user",
      id,
      displayName: `${first} ${last}`,
      status,
      user: { login, emails: i % 50 === 49 ? [] : [login], givenName: first, familyName: last },
      profile: { jobTitle: i % 3 ? "Accountant" : "Controller" },
    });
    const role = old && i % 31 === 0 ? roleIds[(i + 1) % roles] : roleIds[i % roles];
    grant(`role:${role}:assigned`, "user", id);
    for (const k of [0, 1, 2]) grant(`team:${teamIds[(i + k * 7) % teams]}:member`, "user", id);
  };
  for (let i = 0; i < users; i++) {
    if (old && i % 97 === 1) continue;
    user(`u${i}`, i);
  }
  if (old) for (let i = 0; i < Math.max(2, users / 500); i++) user(`old-${i}`, i + 5);
  if (!old) grant("role:r-new:assigned", "user", "u0");
  if (old) grant("team:t-gone:member", "user", "u0");
  flush();
  out.end(
    `${JSON.stringify({ kind: "sync_end", syncId: `sync-${variant}`, status: "complete", finishedAt: old ? "2026-11-14T10:05:00Z" : "2026-11-21T10:05:00Z", counts, skipped: { dangling_grant: 0 } })}\n`,
  );
  await finished(out);
}
