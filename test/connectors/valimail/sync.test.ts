import { readdir } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { startValimailSimulator, type ValimailSimulator } from "../../../lib/simulators/valimail";
import { PAGES_AHEAD, RepeatedPageError } from "../../../lib/sync";
import { mostInFlightDuring } from "../../helpers/requestsInFlight";
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

  it("asks for the next pages of users while it reads the current one, and for no page more", async () => {
    // Prepare: 1,000 users in pages of 50 (20 pages), 30 ms an answer.
    const upstream = await startValimailSimulator({
      seed: 4,
      users: 1000,
      faults: { latencyMs: 30 },
    });
    sim = upstream;
    const dir = await makeTempDir();

    // Act
    const { most, result: synced } = await mostInFlightDuring(
      (path) => path.includes("/Users?"),
      () =>
        syncValimail(upstream, dir, {
          env: { CONNECTOR_EMAILAUTH_PAGE_SIZE: "50" },
        }),
    );

    // Assess: one at a time before; each page asked once, and the list whole.
    expect(most).toBe(1 + PAGES_AHEAD);
    expect(sim.stats.byRoute.list).toBe(20);
    const users = byKind(synced.lines, "resource").filter((r) => r.type === "user");
    expect(users).toHaveLength(1000);
  });

  it("fails, rather than writing a partial snapshot, when the server ignores startIndex", async () => {
    sim = await startValimailSimulator({ seed: 4, users: 300, ignoreStartIndex: true });
    const env = { CONNECTOR_EMAILAUTH_PAGE_SIZE: "100" };

    await expect(syncValimail(sim, await makeTempDir(), { env })).rejects.toThrow(
      /the page at startIndex 101 repeated the previous one after 100 of 300 resources/,
    );
    // The first page, the second, and the one page ahead of it that the total says exists.
    expect(sim.stats.byRoute.list).toBe(3);
  });

  it("fails, naming the server's paging, when it ignores startIndex, caps count silently and sends no totalResults", async () => {
    // Issue 16's measurement: 180 users, pages of at most 50 from the first user, no total. The
    // sync used to end on the repeated page and publish 50 users.
    sim = await startValimailSimulator({
      seed: 4,
      users: 180,
      ignoreStartIndex: true,
      maxCount: 50,
      omitTotal: true,
    });
    const dir = await makeTempDir();

    const error = await syncValimail(sim, dir).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(RepeatedPageError);
    expect((error as Error).message).toBe(
      "Valimail users: the page at startIndex 51 repeated the previous one (50 resources), so the server ignores startIndex (or starts again past the list's end), and it sends no totalResults to show where the list ends. Asked again without the first of them, it answered 50 resources rather than the other 49, so nothing proves those 50 are the whole list; stopped rather than publish it. It serves at most 50 items a page whatever CONNECTOR_EMAILAUTH_PAGE_SIZE (1000) asks, so no page size reads the list whole",
    );
    // Two pages and the probe without the first user.
    expect(sim.stats.byRoute.list).toBe(3);
    expect(await readdir(dir)).toEqual([]);
  });

  it("reads whole a server that answers every user to every request, with or without totalResults", async () => {
    sim = await startValimailSimulator({ seed: 4, users: 45 });
    const clean = await syncValimail(sim, await makeTempDir());
    await sim.close();

    // Asked for 1000, or for 20 from a server that ignores count too.
    for (const [quirks, pageSize] of [
      [{ ignoreStartIndex: true, maxCount: 50, omitTotal: true }, "1000"],
      [{ paging: false, omitTotal: true }, "20"],
      [{ paging: false }, "20"],
    ] as const) {
      sim = await startValimailSimulator({ seed: 4, users: 45, ...quirks });
      const quirky = await syncValimail(sim, await makeTempDir(), {
        env: { CONNECTOR_EMAILAUTH_PAGE_SIZE: pageSize },
      });
      expect(quirky.records).toEqual(clean.records);
      await sim.close();
      sim = undefined;
    }
  });

  it("reads the first user of a server that counts startIndex from 0, with or without totalResults", async () => {
    sim = await startValimailSimulator({ seed: 9, users: 37 });
    const clean = await syncValimail(sim, await makeTempDir());
    await sim.close();

    for (const omitTotal of [false, true]) {
      sim = await startValimailSimulator({
        seed: 9,
        users: 37,
        zeroBasedStartIndex: true,
        omitTotal,
      });
      const zeroBased = await syncValimail(sim, await makeTempDir(), {
        env: { CONNECTOR_EMAILAUTH_PAGE_SIZE: "10" },
      });
      expect(zeroBased.records).toEqual(clean.records);
      // Pages of 10, 10, 10 and 6 (36 users from startIndex 1), then startIndex 0 for one user;
      // with a total, the empty page after the 6 shows the list one short of it first.
      expect(sim.stats.byRoute.list).toBe(omitTotal ? 5 : 6);
      await sim.close();
      sim = undefined;
    }
  });

  it("names a user whose id is not a usable path segment, with the list and page, and fails", async () => {
    sim = await startValimailSimulator({ seed: 6, users: 30 });
    const users = [...sim.users.values()];
    sim.users.clear();
    for (const [index, user] of users.entries()) {
      const id = index === 12 ? ".." : user.id;
      sim.users.set(id, { ...user, id });
    }
    const dir = await makeTempDir();

    await expect(
      syncValimail(sim, dir, { env: { CONNECTOR_EMAILAUTH_PAGE_SIZE: "10" } }),
    ).rejects.toThrow(
      /^Valimail users, page at startIndex 11, item 3: unexpected response body \(id: the id "\.\." is not usable as a URL path segment .*so the sync stops rather than leave the record out\)$/,
    );
    expect(await readdir(dir)).toEqual([]);
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
