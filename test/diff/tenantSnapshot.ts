// Generated snapshots for diff's tests and benchmark: a BlackLine-shaped tenant of users in teams,
// written as a sync writes it (sync_start, resource types, resources, entitlements, grants,
// sync_end), streamed to the file so 100,000 users and 400,000 grants take no memory; with edits,
// the same tenant a sync later.
import { createWriteStream } from "node:fs";
import type { Writable } from "node:stream";
import { finished } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { endStream, jsonLine, writeChunk } from "../../lib/snapshot/jsonLines";

export interface TenantEdits {
  /** Users left out, with their grants. */
  removeUsers?: Iterable<number>;
  /** New users after the last one (each in its teams as any user). */
  addUsers?: number;
  disable?: Iterable<number>;
  rename?: Iterable<number>;
  relogin?: Iterable<number>;
  /** A second email address. */
  reemail?: Iterable<number>;
  /** Teams left out with their entitlement and grants. */
  removeTeams?: Iterable<number>;
  /** New teams (and their entitlements) after the last one, with no members. */
  addTeams?: number;
  /** Memberships as [user, team]. */
  addGrants?: Iterable<[number, number]>;
  removeGrants?: Iterable<[number, number]>;
}

export interface TenantSpec {
  connector?: string;
  syncId?: string;
  users: number;
  teams: number;
  /** Teams each user is in (distinct while below `teams`). */
  teamsPerUser: number;
  edits?: TenantEdits;
  /** Users in reverse order (the order of lines is free). */
  reverse?: boolean;
  /** Leave out sync_end: a sync that did not finish. */
  incomplete?: boolean;
}

/** The teams user `u` is in. */
export function teamsOf(u: number, spec: Pick<TenantSpec, "teams" | "teamsPerUser">): number[] {
  const teams = new Set<number>();
  for (let k = 0; k < spec.teamsPerUser; k++) teams.add((u * 7 + k * 13) % spec.teams);
  return [...teams];
}

export const grantId = (u: number, t: number) => `team:${t}:member:user:${u}`;

/** Writes the tenant to `path` (gzip when it ends in .gz); returns its users and grants. */
export async function writeTenantSnapshot(
  path: string,
  spec: TenantSpec,
): Promise<{ users: number; grants: number }> {
  const file = createWriteStream(path);
  let out: Writable = file;
  if (path.endsWith(".gz")) {
    out = createGzip();
    out.pipe(file);
  }
  const e = spec.edits ?? {};
  const removed = new Set(e.removeUsers);
  const disabled = new Set(e.disable);
  const renamed = new Set(e.rename);
  const relogged = new Set(e.relogin);
  const reemailed = new Set(e.reemail);
  const goneTeams = new Set(e.removeTeams);
  const goneGrants = new Set([...(e.removeGrants ?? [])].map(([u, t]) => grantId(u, t)));
  const connector = spec.connector ?? "blackline";
  let text = "";
  const line = async (value: unknown) => {
    text += jsonLine(value);
    if (text.length > 1 << 16) {
      await writeChunk(out, text);
      text = "";
    }
  };
  await line({
    kind: "sync_start",
    syncId: spec.syncId ?? "sync-1",
    connector,
    startedAt: "2026-11-25T10:00:00Z",
    version: 1,
  });
  await line({ kind: "resource_type", id: "user", displayName: "User", traits: ["user"] });
  await line({ kind: "resource_type", id: "team", displayName: "Team", traits: ["group"] });
  const userCount = spec.users + (e.addUsers ?? 0);
  const teamCount = spec.teams + (e.addTeams ?? 0);
  const userIds: number[] = [];
  for (let u = 0; u < userCount; u++) if (!removed.has(u)) userIds.push(u);
  if (spec.reverse) userIds.reverse();
  for (const u of userIds) {
    const login = relogged.has(u) ? `new${u}@example.com` : `user${u}@example.com`;
    await line({
      kind: "resource",
      type: "user",
      id: String(u),
      displayName: renamed.has(u) ? `Renamed ${u}` : `User ${u}`,
      status: disabled.has(u) ? "disabled" : "enabled",
      user: {
        login,
        emails: reemailed.has(u) ? [login, `alt${u}@example.com`] : [login],
        givenName: "User",
        familyName: String(u),
      },
    });
  }
  let teams = 0;
  for (let t = 0; t < teamCount; t++) {
    if (goneTeams.has(t)) continue;
    teams++;
    await line({ kind: "resource", type: "team", id: String(t), displayName: `Team ${t}` });
    await line({
      kind: "entitlement",
      id: `team:${t}:member`,
      resource: { type: "team", id: String(t) },
      slug: "member",
      displayName: `Team ${t} member`,
      purpose: "assignment",
      grantableTo: ["user"],
    });
  }
  let grants = 0;
  const grant = async (u: number, t: number) => {
    grants++;
    await line({
      kind: "grant",
      id: grantId(u, t),
      entitlement: `team:${t}:member`,
      principal: { type: "user", id: String(u) },
    });
  };
  for (const u of userIds) {
    for (const t of teamsOf(u, spec)) {
      if (!goneTeams.has(t) && !goneGrants.has(grantId(u, t))) await grant(u, t);
    }
  }
  for (const [u, t] of e.addGrants ?? []) await grant(u, t);
  if (!spec.incomplete) {
    await line({
      kind: "sync_end",
      syncId: spec.syncId ?? "sync-1",
      status: "complete",
      finishedAt: "2026-11-25T10:01:00Z",
      counts: {
        resource_type: 2,
        resource: userIds.length + teams,
        entitlement: teams,
        grant: grants,
      },
      skipped: { dangling_grant: 0 },
    });
  }
  await writeChunk(out, text);
  await endStream(out);
  if (out !== file) await finished(file);
  return { users: userIds.length, grants };
}
