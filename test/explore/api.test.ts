import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectorNamed, isPrivileged } from "../../lib/connectors";
import { UsageError } from "../../lib/errors";
import { type ExploreServer, openExplore, startExploreServer } from "../../lib/explore";
import { makeTempDir } from "../helpers/tempDir";
import { writeFixtureSnapshot } from "./fixtureSnapshot";

// The review page's API over real HTTP on 127.0.0.1 (in this process), on two generated
// BlackLine snapshots; the front end's files are stand-ins (the browser test serves the built ones).
let dir: string;
let server: ExploreServer;
let token: string;

/** A request to the page's server with the token as the page sends it (Authorization: Bearer). */
async function api(path: string, init: RequestInit = {}) {
  const response = await fetch(`http://127.0.0.1:${server.port}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) },
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) };
}

const decide = (grantId: string, decision: string | null, note = "") =>
  api("/api/review", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ grantId, decision, note }),
  });

beforeAll(async () => {
  dir = await makeTempDir("ac-explore-api-");
  await writeFixtureSnapshot(join(dir, "new.jsonl"), { users: 200, variant: "new" });
  await writeFixtureSnapshot(join(dir, "old.jsonl"), { users: 200, variant: "old" });
  const { routes } = await openExplore(join(dir, "new.jsonl"), join(dir, "old.jsonl"));
  const assets = new Map([
    ["/app.js", Buffer.from("// app")],
    ["/app.css", Buffer.from("/* css */")],
  ]);
  server = await startExploreServer({ routes, assets, port: 0 });
  token = new URL(server.url).hash.replace(/^#token=/, "");
});

afterAll(() => server?.close());

describe("explore: access", () => {
  it("prints a 256-bit token in the URL's fragment (never sent to a server) and sends the security headers on every answer", async () => {
    const url = new URL(server.url);
    expect(url.hostname).toBe("127.0.0.1");
    expect(`${url.pathname}${url.search}`).toBe("/");
    expect(url.hash).toMatch(/^#token=[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token, "base64url")).toHaveLength(32);
    const bare = `http://127.0.0.1:${server.port}`;
    for (const answer of [
      await api("/api/summary"),
      await fetch(`${bare}/`),
      await fetch(`${bare}/app.js`),
      await fetch(`${bare}/api/summary`),
    ]) {
      expect(answer.headers.get("content-security-policy")).toContain("default-src 'self'");
      expect(answer.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(answer.headers.get("referrer-policy")).toBe("no-referrer");
      expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
      expect(answer.headers.get("set-cookie")).toBeNull();
    }
  });

  it("serves the shell and its assets without the token, and sets no cookie", async () => {
    const bare = `http://127.0.0.1:${server.port}`;
    const shell = await fetch(`${bare}/?token=${token}`);
    expect(shell.status).toBe(200);
    expect(shell.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(shell.headers.get("set-cookie")).toBeNull();
    expect(await shell.text()).toContain('<script type="module" src="/app.js">');
    expect(await (await fetch(`${bare}/app.css`)).text()).toBe("/* css */");
  });

  it("refuses every API request without `Authorization: Bearer <token>`: none, a wrong token, the token in a cookie or the query", async () => {
    const bare = `http://127.0.0.1:${server.port}`;
    const refused = async (path: string, init: RequestInit = {}) => {
      const answer = await fetch(`${bare}${path}`, init);
      expect(answer.status, `${path} ${JSON.stringify(init.headers)}`).toBe(401);
      expect(answer.headers.get("www-authenticate")).toBe('Bearer realm="explore"');
      expect(((await answer.json()) as { error: string }).error).toBe(
        "refused: open the URL with the token that `access-connectors explore` printed (it ends in #token=...)",
      );
    };
    await refused("/api/summary");
    await refused("/api/summary", { headers: { authorization: "Bearer nope" } });
    // The same length as the token, one character off.
    const near = `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`;
    await refused("/api/summary", { headers: { authorization: `Bearer ${near}` } });
    await refused("/api/summary", { headers: { authorization: `Basic ${token}` } });
    await refused("/api/summary", { headers: { authorization: token } });
    // The cookie an older version set, holding the right token, is ignored.
    await refused("/api/summary", { headers: { cookie: `explore_${server.port}=${token}` } });
    await refused(`/api/summary?token=${token}`);
    await refused("/api/review/export?format=csv");
    await refused("/api/review", {
      method: "POST",
      headers: { "content-type": "application/json", cookie: `explore_${server.port}=${token}` },
      body: JSON.stringify({ grantId: "role:r0:assigned:user:u0", decision: "revoke", note: "" }),
    });
    await refused("/api/nothing");
    // The scheme's case does not matter (RFC 7235); the token is the whole credential.
    expect(
      (await api("/api/summary", { headers: { authorization: `bearer ${token}` } })).status,
    ).toBe(200);
    expect((await api("/api/summary")).json().review.revoke).toBe(0);
  });
});

describe("explore: requests parsed, paths and methods", () => {
  it("answers 400 naming the field, 404 for other paths, 405 for other methods", async () => {
    const big = await api("/api/accounts?limit=9999");
    expect(big.status).toBe(400);
    expect(big.json().error).toBe("query limit: Too big: expected number to be <=500");
    expect((await api("/api/accounts?colour=red")).json().error).toBe(
      "query has unknown field colour",
    );
    expect((await api("/api/accounts?sort=a&sort=b")).json().error).toBe(
      "query sort is given twice; give it once",
    );
    expect((await api("/api/accounts?entitlement=role:nope:assigned")).json().error).toContain(
      'no entitlement has the id "role:nope:assigned"',
    );
    expect((await decide("role:r0:assigned:user:u999999", "keep")).json().error).toContain(
      'body grantId: no grant has the id "role:r0:assigned:user:u999999"',
    );
    const badDecision = await decide("role:r0:assigned:user:u0", "approve");
    expect(badDecision.status).toBe(400);
    expect(badDecision.json().error).toMatch(/^body decision: /);
    const notJson = await api("/api/review", {
      method: "POST",
      body: "decision=keep",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(notJson.json().error).toBe("body: send JSON with Content-Type: application/json");
    expect((await api("/api/nothing")).status).toBe(404);
    expect((await api("/api/accounts/user/nobody")).status).toBe(404);
    const post = await api("/api/accounts", { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET");
  });
});

describe("explore: views", () => {
  it("searches across names, logins and ids, filters, sorts and pages", async () => {
    const byLogin = (await api("/api/accounts?q=ada.lovelace0%40")).json();
    expect(byLogin.rows.map((r: { id: string }) => r.id)).toEqual(["u0"]);
    expect(
      (await api("/api/accounts?q=u13")).json().rows.map((r: { id: string }) => r.id),
    ).toContain("u13");
    const disabled = (await api("/api/accounts?status=disabled&limit=500")).json();
    expect(disabled.rows.every((r: { status: string }) => r.status === "disabled")).toBe(true);
    const page1 = (await api("/api/accounts?sort=id&dir=desc&limit=5")).json();
    const page2 = (await api("/api/accounts?sort=id&dir=desc&limit=5&offset=5")).json();
    const ids = [...page1.rows, ...page2.rows].map((r: { id: string }) => r.id);
    expect(ids).toEqual([...ids].sort((a, b) => b.localeCompare(a, "en", { numeric: true })));
    expect(page1.total).toBe(200 - 0);
    const holders = (await api("/api/accounts?entitlement=role:r-new:assigned")).json();
    expect(holders.rows.map((r: { id: string }) => r.id)).toEqual(["u0"]);
  });

  it("shows what an account holds and how: directly, through a team, added and removed", async () => {
    const detail = (await api("/api/accounts/user/u0")).json();
    const how = Object.fromEntries(
      detail.holdings.map((h: { grantId: string; via?: { id: string }; change?: string }) => [
        h.grantId,
        `${h.via ? `via ${h.via.id}` : "direct"}${h.change ? ` ${h.change}` : ""}`,
      ]),
    );
    expect(how).toEqual({
      "role:r0:assigned:user:u0": "direct added",
      "role:r-new:assigned:user:u0": "direct added",
      "team:t0:member:user:u0": "direct",
      "team:t1:member:user:u0": "direct",
      "team:t2:member:user:u0": "direct",
      "role:r1:assigned:team:t0": "via t0",
    });
    expect(detail.removedHoldings.map((h: { grantId: string }) => h.grantId).sort()).toEqual([
      "role:r1:assigned:user:u0",
      "team:t-gone:member:user:u0",
    ]);
    // An account only the older sync had is shown as removed.
    const gone = (await api("/api/accounts/user/old-0")).json();
    expect(gone.account.change).toBe("removed");
  });

  it("lists an entitlement's holders, members of a team it is granted to among them", async () => {
    const detail = (await api("/api/entitlements/role%3Ar1%3Aassigned?limit=500")).json();
    const viaTeam = detail.holders.filter((h: { via?: { id: string } }) => h.via?.id === "t0");
    const members = (await api("/api/accounts?entitlement=team:t0:member&limit=500")).json();
    expect(viaTeam.length).toBe(members.total);
    expect(detail.entitlement.privileged).toBe(true);
    const teams = (await api("/api/entitlements?resourceType=team")).json();
    expect(teams.rows.every((e: { privileged: boolean }) => !e.privileged)).toBe(true);
    // An entitlement only the older sync had: its holders then, from the older index's lists by
    // entitlement (read at their first use).
    const gone = (await api("/api/entitlements/team%3At-gone%3Amember")).json();
    expect(gone.holders.map((h: { grantId: string }) => h.grantId)).toContain(
      "team:t-gone:member:user:u0",
    );
    expect(gone.total).toBe(gone.holders.length);
  });

  it("counts the risks the way the fixture makes them, and the changes", async () => {
    const summary = (await api("/api/summary")).json();
    // Every 20th user is disabled (plus every 89th from 2 since the old sync); every 50th has no email.
    expect(summary.risks.no_email).toBe(4);
    const disabled = (await api("/api/accounts?risk=disabled_with_access&limit=500")).json();
    expect(disabled.total).toBe(summary.risks.disabled_with_access);
    expect(
      disabled.rows.every(
        (r: { status: string; entitlements: number }) =>
          r.status === "disabled" && r.entitlements > 0,
      ),
    ).toBe(true);
    expect(summary.diff.counts).toMatchObject({
      accountsAdded: 3,
      accountsRemoved: 2,
      entitlementsAdded: 1,
      entitlementsRemoved: 1,
    });
    const changed = (await api("/api/changes?kind=accounts&change=changed")).json();
    expect(changed.rows.map((r: { id: string }) => r.id).sort()).toEqual(["u180", "u2", "u91"]);
    expect(changed.rows[0].fields).toEqual([
      { field: "status", before: "enabled", after: "disabled" },
    ]);
  });
});

describe("explore: review", () => {
  it("keeps decisions in a file beside the snapshot, reopens them, and exports CSV and JSON", async () => {
    expect(
      (await decide("role:r-new:assigned:user:u0", "revoke", 'not requested, "urgent"')).status,
    ).toBe(200);
    expect((await decide("team:t1:member:user:u3", "flag", "=cmd()")).status).toBe(200);
    expect((await decide("team:t0:member:user:u0", "keep")).status).toBe(200);
    expect((await decide("team:t0:member:user:u0", null)).status).toBe(200);
    const file = JSON.parse(await readFile(join(dir, "new.jsonl.review.json"), "utf8"));
    expect(Object.keys(file.decisions).sort()).toEqual([
      "role:r-new:assigned:user:u0",
      "team:t1:member:user:u3",
    ]);
    const reopened = await openExplore(join(dir, "new.jsonl"));
    expect(reopened.explore.review.counts()).toEqual({ keep: 0, revoke: 1, flag: 1 });

    const csv = await api("/api/review/export?format=csv");
    expect(csv.headers.get("content-disposition")).toBe(
      'attachment; filename="review-blackline-sync-new.csv"',
    );
    const lines = csv.text.trim().split("\r\n");
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(
      /^role:r-new:assigned:user:u0,user,u0,Ada Lovelace,.*,revoke,"not requested, ""urgent""",/,
    );
    // A note a spreadsheet would run as a formula is written as text.
    expect(lines[2]).toContain(",flag,'=cmd(),");
    const json = (await api("/api/review/export?format=json")).json();
    expect(json.counts).toMatchObject({ keep: 0, revoke: 1, flag: 1 });
    expect(json.decisions[0].entitlement.privileged).toBe(true);
    expect((await api("/api/review/export?format=xml")).status).toBe(400);
  });

  it("refuses a review file of another sync instead of mixing reviews", async () => {
    const other = join(dir, "other.jsonl");
    await writeFixtureSnapshot(other, { users: 3, variant: "old" });
    await writeFile(
      `${other}.review.json`,
      JSON.stringify({
        version: 1,
        snapshot: { syncId: "sync-x", connector: "blackline" },
        decisions: {},
      }),
    );
    await expect(openExplore(other)).rejects.toThrow(/holds the review of sync sync-x/);
  });
});

describe("explore: inputs", () => {
  it("refuses a file that is not a complete snapshot, naming the line", async () => {
    const partial = join(dir, "partial.jsonl");
    const text = await readFile(join(dir, "new.jsonl"), "utf8");
    await writeFile(partial, text.split("\n").slice(0, 20).join("\n"));
    await expect(openExplore(partial)).rejects.toThrow(UsageError);
    await expect(openExplore(partial)).rejects.toThrow(/no sync_end/);
    const broken = join(dir, "broken.jsonl");
    await writeFile(broken, text.replace('"kind":"grant","id"', '"kind":"grant","idx"'));
    await expect(openExplore(broken)).rejects.toThrow(
      /line \d+ is not a snapshot record \(a grant's id: Invalid input/,
    );
  });

  it("reads the lines between the first and the last in any order (grants before their ends)", async () => {
    const text = (await readFile(join(dir, "new.jsonl"), "utf8")).trimEnd().split("\n");
    const reversed = join(dir, "reversed.jsonl");
    const body = text.slice(1, -1).reverse();
    await writeFile(reversed, `${[text[0], ...body, text.at(-1)].join("\n")}\n`);
    const holdings = async (path: string) => {
      const { explore } = await openExplore(path);
      const u0 = explore.index.resourceNamed("user:u0") as number;
      return explore.index
        .holdings(u0)
        .map((h) => explore.index.grantId(h.grant))
        .sort();
    };
    expect(await holdings(reversed)).toEqual(await holdings(join(dir, "new.jsonl")));
    expect((await holdings(reversed)).length).toBe(6);
  });

  it("marks privileged entitlements by each connector's definition", () => {
    const role = { id: "role:7:assigned", resource: { type: "role" } };
    const team = { id: "team:7:member", resource: { type: "team" } };
    expect(isPrivileged(connectorNamed("blackline").privileged, role)).toBe(true);
    expect(isPrivileged(connectorNamed("blackline").privileged, team)).toBe(false);
    const valimail = connectorNamed("valimail").privileged;
    expect(
      isPrivileged(valimail, {
        id: "member_type:owner:assigned",
        resource: { type: "member_type" },
      }),
    ).toBe(true);
    expect(
      isPrivileged(valimail, {
        id: "member_type:member:assigned",
        resource: { type: "member_type" },
      }),
    ).toBe(false);
  });
});
