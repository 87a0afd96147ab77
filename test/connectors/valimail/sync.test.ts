import { afterEach, describe, expect, it } from "vitest";
import { startValimailSimulator, type ValimailSimulator } from "../../../lib/simulators/valimail";
import type { Line } from "../../helpers/snapshot";
import { makeTempDir } from "../../helpers/tempDir";
import { syncValimail } from "../../helpers/valimail";

let sim: ValimailSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const byKind = (lines: Line[], kind: string) => lines.filter((l) => l.kind === kind);

describe("Valimail sync against the simulator", () => {
  it("writes every account of 2,000, its status and its member type", async () => {
    // Prepare
    sim = await startValimailSimulator({ seed: 21, users: 2000 });
    const accounts = [...sim.users.values()];

    // Act
    const { lines, summary } = await syncValimail(sim, await makeTempDir());

    // Assess
    const users = byKind(lines, "resource").filter((r) => r.type === "user");
    expect(users).toHaveLength(2000);
    const disabled = new Set(users.filter((u) => u.status === "disabled").map((u) => u.id));
    expect(disabled).toEqual(new Set(accounts.filter((a) => !a.active).map((a) => a.id)));
    expect(disabled.size).toBeGreaterThan(50);

    const types = byKind(lines, "resource")
      .filter((r) => r.type === "member_type")
      .map((r) => r.id);
    expect(types.sort()).toEqual(["marketer", "member", "owner"]);
    expect(
      byKind(lines, "entitlement")
        .map((e) => e.id)
        .sort(),
    ).toEqual([
      "member_type:marketer:assigned",
      "member_type:member:assigned",
      "member_type:owner:assigned",
    ]);
    const grants = new Set(byKind(lines, "grant").map((g) => g.id));
    expect(grants).toEqual(
      new Set(accounts.map((a) => `member_type:${a.memberType}:assigned:user:${a.id}`)),
    );
    for (const type of ["owner", "member", "marketer"]) {
      expect(accounts.filter((a) => a.memberType === type).length).toBeGreaterThan(50);
    }
    expect(summary.counts).toEqual({
      resource_type: 2,
      resource: 2003,
      entitlement: 3,
      grant: 2000,
    });

    const account = accounts.find((a) => /[^ -~]/.test(a.givenName + a.familyName)) ?? accounts[0];
    expect(users.find((u) => u.id === account?.id)).toEqual({
      kind: "resource",
      type: "user",
      id: account?.id,
      displayName: `${account?.givenName} ${account?.familyName}`,
      status: account?.active ? "enabled" : "disabled",
      user: {
        login: account?.userName,
        emails: [account?.userName],
        givenName: account?.givenName,
        familyName: account?.familyName,
      },
      profile: { created: account?.created, lastModified: account?.lastModified },
    });
  });

  it("lists owner and member, and no marketer, for an account without marketer", async () => {
    sim = await startValimailSimulator({ seed: 3, users: 150, marketer: false });

    const { lines } = await syncValimail(sim, await makeTempDir());

    const types = byKind(lines, "resource")
      .filter((r) => r.type === "member_type")
      .map((r) => r.id);
    expect(types.sort()).toEqual(["member", "owner"]);
  });

  it("reads an unpaginated server, and a server that caps count, completely", async () => {
    sim = await startValimailSimulator({ seed: 4, users: 450, paging: false });
    const unpaginated = await syncValimail(sim, await makeTempDir());
    const unpaginatedRequests = sim.stats.byRoute.list;
    await sim.close();
    sim = await startValimailSimulator({ seed: 4, users: 450, maxCount: 40 });
    const capped = await syncValimail(sim, await makeTempDir());

    expect(byKind(unpaginated.lines, "resource").filter((r) => r.type === "user")).toHaveLength(
      450,
    );
    expect(unpaginatedRequests).toBe(1);
    expect(capped.records).toEqual(unpaginated.records);
    expect(sim.stats.byRoute.list).toBe(Math.ceil(450 / 40));
  });

  it("fails, rather than writing a partial snapshot, when the server ignores startIndex", async () => {
    sim = await startValimailSimulator({ seed: 4, users: 300, ignoreStartIndex: true });
    const env = { CONNECTOR_EMAILAUTH_PAGE_SIZE: "100" };

    await expect(syncValimail(sim, await makeTempDir(), { env })).rejects.toThrow(
      /the page at startIndex 101 repeated the previous one after 100 of 300 resources/,
    );
    expect(sim.stats.byRoute.list).toBe(2);
  });

  it("survives 429s, 5xx bursts, dropped connections and token expiry with the records of a clean run", async () => {
    const env = { CONNECTOR_EMAILAUTH_PAGE_SIZE: "50" };
    sim = await startValimailSimulator({ seed: 8, users: 800 });
    const clean = await syncValimail(sim, await makeTempDir(), { env });
    await sim.close();
    sim = await startValimailSimulator({
      seed: 8,
      users: 800,
      tokenLifetimeSeconds: 1,
      expiresField: "expires_at",
      faults: {
        latencyMs: 80,
        rateLimit: { every: 5 },
        serverErrors: { every: 7, burst: 2 },
        dropConnections: { every: 11 },
      },
    });

    const faulty = await syncValimail(sim, await makeTempDir(), { env });

    expect(faulty.records).toEqual(clean.records);
    expect(faulty.summary.rateLimitWaits).toBeGreaterThan(3);
    expect(faulty.counters.tokenRequests).toBeGreaterThan(1);
  });
});
