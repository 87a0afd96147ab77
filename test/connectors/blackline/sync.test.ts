import { readdir } from "node:fs/promises";
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { BlacklineSyncer, loadBlacklineConfig } from "../../../lib/connectors/blackline";
import { newRequestContext } from "../../../lib/http";
import {
  type BlacklineSimulator,
  startBlacklineSimulator,
} from "../../../lib/simulators/blackline";
import { type JobSpec, makeJob, PAGES_AHEAD } from "../../../lib/sync";
import { expectedFromTenant, FAST_RETRY, syncBlackline } from "../../helpers/blackline";
import { startRecordingProxy } from "../../helpers/recordingProxy";
import { mostInFlightDuring } from "../../helpers/requestsInFlight";
import type { Line } from "../../helpers/snapshot";
import { makeTempDir } from "../../helpers/tempDir";

let sim: BlacklineSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const byKind = (lines: Line[], kind: string) => lines.filter((l) => l.kind === kind);

describe("BlackLine sync against the simulator", () => {
  it("writes every user, team, role, membership and role assignment of a 5,000-user tenant", async () => {
    // Prepare
    sim = await startBlacklineSimulator({ seed: 7, size: { users: 5000, teams: 300, roles: 40 } });
    const expected = expectedFromTenant(sim.tenant);

    // Act
    const { lines, summary } = await syncBlackline(sim, await makeTempDir());

    // Assess
    expect(lines[0]).toMatchObject({ kind: "sync_start", connector: "blackline", version: 1 });
    expect(lines.at(-1)).toMatchObject({ kind: "sync_end", status: "complete" });
    const resources = byKind(lines, "resource");
    const users = resources.filter((r) => r.type === "user");
    expect(users).toHaveLength(5000);
    expect(resources.filter((r) => r.type === "team")).toHaveLength(300);
    expect(resources.filter((r) => r.type === "role")).toHaveLength(40);
    expect(byKind(lines, "entitlement")).toHaveLength(340);

    const disabled = new Set(users.filter((u) => u.status === "disabled").map((u) => u.id));
    expect(disabled).toEqual(expected.disabledUserIds);
    expect(disabled.size).toBeGreaterThan(100);
    expect(users.every((u) => u.status === "enabled" || u.status === "disabled")).toBe(true);

    const grantIds = new Set(byKind(lines, "grant").map((g) => g.id));
    expect(grantIds).toEqual(expected.grants);
    expect(summary.counts).toEqual({
      resource_type: 3,
      resource: 5340,
      entitlement: 340,
      grant: expected.grants.size,
    });
    expect(summary.skipped.dangling_grant).toBe(0);

    // Content of one user, non-ASCII names included, and ids as strings.
    const simUser = sim.tenant.users.find((u) => /[^ -~]/.test(u.fullName));
    const user = users.find((u) => u.id === String(simUser?.id));
    expect(user).toEqual({
      kind: "resource",
      type: "user",
      id: String(simUser?.id),
      displayName: simUser?.fullName,
      status: simUser?.isActive ? "enabled" : "disabled",
      user: {
        login: simUser?.loginId,
        emails: [simUser?.email],
        givenName: simUser?.firstName,
        familyName: simUser?.lastName,
      },
      profile: { jobTitle: simUser?.jobTitle, timeZoneId: simUser?.timeZoneId },
    });
    const team = byKind(lines, "entitlement").find((e) => e.id === "team:500:member");
    expect(team).toEqual({
      kind: "entitlement",
      id: "team:500:member",
      resource: { type: "team", id: "500" },
      slug: "member",
      displayName: `${sim.tenant.teams[0]?.name} member`,
      purpose: "assignment",
      grantableTo: ["user"],
    });
  });

  it("reads memberships from the side with fewer objects, with the fewest requests", async () => {
    // Prepare: 5,000 users and 300 teams, pages of at most 1,000.
    sim = await startBlacklineSimulator({ seed: 3, size: { users: 5000, teams: 300, roles: 40 } });
    const largestTeam = Math.max(...[...sim.tenant.teamMembers.values()].map((m) => m.length));
    expect(largestTeam).toBeLessThanOrEqual(1000);

    // Act
    const { summary } = await syncBlackline(sim, await makeTempDir());

    // Assess: 5 user pages + 1 team page + 1 role page + one page per team = 307 needed, and the
    // token call: the plan reads the first pages of users and teams, whose totals pick the side,
    // rather than counting them first. The users' last page is full, and its count reaches
    // totalItems on a page no longer than asked: the list ends there, with no empty page after it.
    const minimum = 5 + 1 + 1 + 300;
    expect(sim.stats.byRoute.team_users).toBe(300);
    expect(sim.stats.byRoute.user_teams).toBeUndefined();
    expect(sim.stats.byRoute.users).toBe(5);
    expect(summary.requests).toBe(sim.stats.requests);
    expect(summary.requests).toBe(minimum + 1);
  });

  it("asks for a list's next pages while it reads the current one, and for no page more", async () => {
    // Prepare: 2,000 users in pages of 100 (20 pages), 30 ms an answer.
    const upstream = await startBlacklineSimulator({
      seed: 5,
      size: { users: 2000, teams: 20, roles: 3 },
      maxPageSize: 100,
      faults: { latencyMs: 30 },
    });
    sim = upstream;
    const dir = await makeTempDir();

    // Act
    const { most, result: synced } = await mostInFlightDuring(
      (path) => path.startsWith("/v1/users?"),
      () =>
        syncBlackline(upstream, dir, {
          env: { CONNECTOR_ACCOUNTING_PAGE_SIZE: "100" },
        }),
    );

    // Assess: the page read and the pages asked for ahead of it were on their way together (one
    // at a time before), each page asked once, and the list whole.
    expect(most).toBe(1 + PAGES_AHEAD);
    expect(sim.stats.byRoute.users).toBe(20);
    const written = byKind(synced.lines, "resource").filter((r) => r.type === "user");
    expect(new Set(written.map((u) => u.id))).toEqual(
      new Set(sim.tenant.users.map((u) => String(u.id))),
    );
  });

  it("plans from the first pages of users and teams: their records, their next pages first, then the smaller side's memberships", async () => {
    sim = await startBlacklineSimulator({ seed: 6, size: { users: 40, teams: 30, roles: 3 } });
    const config = loadBlacklineConfig({
      ...sim.env(),
      CONNECTOR_ACCOUNTING_PAGE_SIZE: "10",
    });
    const connector = new BlacklineSyncer(config, { retry: FAST_RETRY });
    const plan = makeJob(
      { syncId: "s", connector: "blackline", connectorId: "blackline" },
      { resourceType: "membership", op: "plan" },
    );

    const page = await connector.runJob(plan, newRequestContext());

    // Two requests: the first page of each list, no counts before them.
    expect(sim.stats.byRoute.users).toBe(1);
    expect(sim.stats.byRoute.teams).toBe(1);
    const resources = page.records.filter((r) => r.kind === "resource");
    expect(resources.filter((r) => r.type === "user")).toHaveLength(10);
    expect(resources.filter((r) => r.type === "team")).toHaveLength(10);
    // 30 teams against 40 users: memberships are walked from the teams of this first page, in
    // one group job (its ten teams' first membership pages).
    expect(page.children?.map((c) => [c.resourceType, c.op])).toEqual([
      ["user", "list"],
      ["team", "list"],
      ["team", "membersOf"],
    ]);
    expect(page.children?.[2]?.cursor).toEqual({
      ids: resources.filter((r) => r.type === "team").map((r) => r.id),
    });
    expect(page.children?.slice(0, 2).map((c) => c.cursor)).toEqual([
      expect.objectContaining({ page: 2, seen: 10, total: 40, withMembers: false }),
      expect.objectContaining({ page: 2, seen: 10, total: 30, withMembers: true }),
    ]);
  });

  it("reads a membership group's pages in order, the next two on their way, each asked once", async () => {
    // Prepare: a group job of 20 teams, 30 ms an answer.
    const { upstream, ids, memberships } = await twentyTeams();
    // Nothing paced: the pace's startup would space the requests, not the group's reads.
    const config = loadBlacklineConfig({
      ...upstream.env(),
      CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0",
    });
    const connector = new BlacklineSyncer(config, { retry: FAST_RETRY });
    const group = makeJob(
      { syncId: "s", connector: "blackline", connectorId: "blackline" },
      { resourceType: "team", op: "membersOf", cursor: { ids } },
    );

    // Act
    const { most, result: page } = await mostInFlightDuring(
      (path) => path.includes("/users") && path.startsWith("/v1/teams/"),
      () => connector.runJob(group, newRequestContext()),
    );

    // Assess: three at once, one request a team, every membership read.
    expect(most).toBe(1 + PAGES_AHEAD);
    expect(upstream.stats.byRoute.team_users).toBe(20);
    expect(new Set(page.records.filter((r) => r.kind === "grant").map((g) => g.id))).toEqual(
      memberships,
    );
  });

  it("keeps a group's items read ahead when one of its items fails: no membership page read twice", async () => {
    // Prepare: a group job of 20 teams behind a proxy that answers the 5th team's first request
    // 500 (not retried); the 6th's and 7th's are on their way by then, read ahead.
    const { upstream, ids, memberships } = await twentyTeams();
    const failing = `/v1/teams/${ids[4]}/users`;
    let failed = 0;
    const proxy = await startRecordingProxy(upstream.url, undefined, (url) =>
      url.startsWith(failing) && failed++ === 0 ? 500 : undefined,
    );
    onTestFinished(proxy.close);
    const config = loadBlacklineConfig({
      ...upstream.env(),
      CONNECTOR_ACCOUNTING_BASE_URL: proxy.url,
      CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0",
    });
    const connector = new BlacklineSyncer(config, { retry: FAST_RETRY });
    const scope = { syncId: "s", connector: "blackline", connectorId: "blackline" };

    // Act: the group, then the group of the items it did not read.
    const first = await connector.runJob(
      makeJob(scope, { resourceType: "team", op: "membersOf", cursor: { ids } }),
      newRequestContext(),
    );
    const rest = (first.children ?? []).filter((c) => c.op === "membersOf");
    expect(rest).toHaveLength(1);
    const second = await connector.runJob(makeJob(scope, rest[0] as JobSpec), newRequestContext());

    // Assess: the group ended at the 5th team, kept the 6th and 7th, and every team's page was
    // read once; every membership is there.
    expect(failed).toBe(2);
    expect(rest[0]?.cursor).toEqual({ ids: [ids[4], ...ids.slice(7)] });
    const readOk = new Map<string, number>();
    for (const { url, status } of proxy.exchanges) {
      if (status === 200 && url.includes("/users")) readOk.set(url, (readOk.get(url) ?? 0) + 1);
    }
    expect(readOk.size).toBe(20);
    expect([...readOk.values()].every((n) => n === 1)).toBe(true);
    const grants = [...first.records, ...second.records].filter((r) => r.kind === "grant");
    expect(new Set(grants.map((g) => g.id))).toEqual(memberships);
  });

  it("walks memberships from the users when there are fewer users than teams", async () => {
    sim = await startBlacklineSimulator({ seed: 4, size: { users: 40, teams: 200, roles: 5 } });
    const expected = expectedFromTenant(sim.tenant);

    const { lines, summary } = await syncBlackline(sim, await makeTempDir());

    expect(sim.stats.byRoute.user_teams).toBe(40);
    expect(sim.stats.byRoute.team_users).toBeUndefined();
    // One page each of users, teams and roles, one request a user, and the token call.
    expect(summary.requests).toBe(1 + 1 + 1 + 40 + 1);
    expect(new Set(byKind(lines, "grant").map((g) => g.id))).toEqual(expected.grants);
  });

  it("copes with a server that caps the page size below the one asked for, with or without totalItems", async () => {
    for (const omitTotal of [false, true]) {
      sim = await startBlacklineSimulator({
        seed: 5,
        size: { users: 700, teams: 30, roles: 8 },
        maxPageSize: 150,
        omitTotal,
      });
      const expected = expectedFromTenant(sim.tenant);

      const { lines } = await syncBlackline(sim, await makeTempDir(), {
        env: { CONNECTOR_ACCOUNTING_PAGE_SIZE: "1000" },
      });

      expect(byKind(lines, "resource").filter((r) => r.type === "user")).toHaveLength(700);
      expect(new Set(byKind(lines, "grant").map((g) => g.id))).toEqual(expected.grants);
      // Pages of 150 (asked for 150 once the first came short, which proves nothing: without
      // totalItems the list used to end there, at 150 of 700). The last, of 100, is shorter than
      // the pages served before it, so it ends the list.
      expect(sim.stats.byRoute.users).toBe(Math.ceil(700 / 150));
      await sim.close();
      sim = undefined;
    }
  });

  it("fails a server that ignores the page parameter and sends no totalItems, saying why", async () => {
    sim = await startBlacklineSimulator({
      seed: 1,
      size: { users: 300, teams: 10, roles: 3 },
      ignorePaging: true,
      omitTotal: true,
    });
    const dir = await makeTempDir();

    await expect(syncBlackline(sim, dir)).rejects.toThrow(
      /^BlackLine (users|teams|roles|members of team \d+): page 2 repeated page 1, so the server ignores the page parameter, and it sends no totalItems, so nothing proves that its \d+ items are the whole list; stopped rather than publish it/,
    );
    expect(await readdir(dir)).toEqual([]);
  });

  it("completes with 429 storms, 5xx bursts, dropped connections and slow answers, with the records of a clean run", async () => {
    // Prepare: a clean run first, then the same tenant with every fault on.
    const size = { users: 1500, teams: 80, roles: 20 };
    const env = { CONNECTOR_ACCOUNTING_PAGE_SIZE: "200" };
    sim = await startBlacklineSimulator({ seed: 11, size });
    const clean = await syncBlackline(sim, await makeTempDir(), { env });
    await sim.close();
    sim = await startBlacklineSimulator({
      seed: 11,
      size,
      faults: {
        rateLimit: { every: 7, retryAfter: "none" },
        serverErrors: { every: 23, burst: 3 },
        dropConnections: { every: 19 },
        // Well beyond the timeout below, which is well beyond a normal answer on a busy machine.
        slowResponses: { every: 41, delayMs: 4000 },
        // Which attempt of which request fails is fixed, however 16 requests at once interleave.
        perRequest: true,
      },
    });

    // Act
    const faulty = await syncBlackline(sim, await makeTempDir(), { env, timeoutMs: 2000 });

    // Assess
    expect(faulty.records).toEqual(clean.records);
    expect(faulty.summary.rateLimitWaits).toBeGreaterThan(10);
    expect(faulty.summary.retries).toBeGreaterThan(faulty.summary.rateLimitWaits);
    expect(faulty.summary.requests).toBeGreaterThan(clean.summary.requests);
  });

  it("honours Retry-After in seconds and as an HTTP date", async () => {
    // One request at a time, and one team (a membership group reads its next items' pages while
    // one waits): with others in flight a refused request's wait ends early once one sent after
    // it is accepted (docs/rate-control.md), so its length said nothing of the header (2 waits of
    // 1,943-1,977 ms in all, and 1,014, in 8 of 12 runs four at a time, before).
    const env = { CONNECTOR_ACCOUNTING_MAX_CONCURRENCY: "1" };
    for (const retryAfter of ["seconds", "date"] as const) {
      sim = await startBlacklineSimulator({
        seed: 2,
        size: { users: 120, teams: 1, roles: 3 },
        faults: { rateLimit: { every: 3, retryAfter, seconds: 1 } },
      });
      const { summary } = await syncBlackline(sim, await makeTempDir(), { env });
      expect(summary.rateLimitWaits).toBeGreaterThanOrEqual(2);
      // Every wait was the server's second (an HTTP date rounds to whole seconds).
      expect(summary.rateLimitWaitMs).toBeGreaterThanOrEqual(summary.rateLimitWaits * 1);
      // Each refused request waited its own second, counted from when the client came to it
      // after reading the 429 (some ms later on a busy machine).
      if (retryAfter === "seconds") {
        expect(summary.rateLimitWaitMs).toBeGreaterThanOrEqual(950 * summary.rateLimitWaits);
      }
      await sim.close();
      sim = undefined;
    }
  });

  it("refreshes a token that expires mid-sync, and one the server revokes early", async () => {
    // Prepare: one-second tokens and slow answers make the sync outlive several tokens.
    const size = { users: 600, teams: 40, roles: 6 };
    const env = { CONNECTOR_ACCOUNTING_PAGE_SIZE: "50", CONNECTOR_ACCOUNTING_MAX_CONCURRENCY: "4" };
    sim = await startBlacklineSimulator({ seed: 9, size });
    const clean = await syncBlackline(sim, await makeTempDir(), { env });
    await sim.close();

    sim = await startBlacklineSimulator({
      seed: 9,
      size,
      tokenLifetimeSeconds: 1,
      faults: { latencyMs: 100 },
    });
    const expiring = await syncBlackline(sim, await makeTempDir(), { env });
    await sim.close();

    sim = await startBlacklineSimulator({ seed: 9, size, tokenMaxUses: 10 });
    const revoked = await syncBlackline(sim, await makeTempDir(), { env });

    // Assess
    expect(expiring.records).toEqual(clean.records);
    expect(expiring.counters.tokenRequests).toBeGreaterThan(1);
    expect(revoked.records).toEqual(clean.records);
    expect(revoked.counters.tokenRequests).toBeGreaterThan(5);
  });

  it("stops with a clear error, instead of looping, when the server ignores the page parameter", async () => {
    sim = await startBlacklineSimulator({
      seed: 1,
      size: { users: 500, teams: 10, roles: 3 },
      ignorePaging: true,
      maxPageSize: 100,
    });
    const dir = await makeTempDir();

    await expect(
      syncBlackline(sim, dir, { env: { CONNECTOR_ACCOUNTING_PAGE_SIZE: "100" } }),
    ).rejects.toThrow(
      /page 2 repeated page 1, so the server ignores the page parameter.*CONNECTOR_ACCOUNTING_PAGE_SIZE to at least 500/,
    );
    // Page 1, page 2 and the pages asked for ahead of it (the total says five pages).
    expect(sim.stats.byRoute.users).toBeLessThanOrEqual(2 + PAGES_AHEAD);
    expect(sim.stats.requests).toBeLessThan(30);
  });

  it("completes correctly when the server ignores the page parameter but one page holds everything", async () => {
    sim = await startBlacklineSimulator({
      seed: 1,
      size: { users: 300, teams: 10, roles: 3 },
      ignorePaging: true,
    });
    const expected = expectedFromTenant(sim.tenant);

    const { lines } = await syncBlackline(sim, await makeTempDir());

    expect(byKind(lines, "resource").filter((r) => r.type === "user")).toHaveLength(300);
    expect(new Set(byKind(lines, "grant").map((g) => g.id))).toEqual(expected.grants);
  });
});

/** A tenant of 20 teams answering in 30 ms, for a membership group: its team ids and team memberships. */
async function twentyTeams() {
  const upstream = await startBlacklineSimulator({
    seed: 6,
    size: { users: 40, teams: 20, roles: 3 },
    faults: { latencyMs: 30 },
  });
  sim = upstream;
  const ids = upstream.tenant.teams.map((t) => String(t.id));
  const grants = [...expectedFromTenant(upstream.tenant).grants];
  return { upstream, ids, memberships: new Set(grants.filter((g) => g.startsWith("team:"))) };
}
