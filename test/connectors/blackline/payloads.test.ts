import { afterEach, describe, expect, it } from "vitest";
import { BlacklineSyncer, loadBlacklineConfig } from "../../../lib/connectors/blackline";
import { newRequestContext, UnexpectedResponseError } from "../../../lib/http";
import {
  type RunningSimulator,
  type SimResponse,
  startSimServer,
} from "../../../lib/simulators/httpServer";
import { InvalidJobError, makeJob } from "../../../lib/sync";

let server: RunningSimulator | undefined;
afterEach(() => server?.close());

/** A BlackLine stand-in that answers one malformed users page (the simulator never does). */
async function connectorAgainst(items: unknown[]) {
  return connectorAnswering(() => ({ status: 200, body: { items, totalItems: items.length } }));
}

/** A BlackLine stand-in that issues tokens and answers every list request with `answer`. */
async function connectorAnswering(answer: () => SimResponse) {
  server = await startSimServer(
    (req) =>
      req.url.pathname.endsWith("/token")
        ? { status: 200, body: { access_token: "t0ken-value", expires_in: 3600 } }
        : answer(),
    () => ({}),
  );
  const config = loadBlacklineConfig({
    CONNECTOR_ACCOUNTING_BASE_URL: server.url,
    CONNECTOR_ACCOUNTING_CLIENT_ID: "c",
    CONNECTOR_ACCOUNTING_CLIENT_SECRET: "client-secret-x",
    CONNECTOR_ACCOUNTING_USERNAME: "u",
    CONNECTOR_ACCOUNTING_API_KEY: "api-key-x",
    CONNECTOR_ACCOUNTING_SCOPE: "x instance_3f2504e0-4f89-11d3-9a0c-0305e82c3301",
  });
  return new BlacklineSyncer(config);
}

const usersJob = makeJob(
  { syncId: "s", connector: "blackline", connectorId: "blackline" },
  {
    resourceType: "user",
    op: "list",
    cursor: { page: 1, seen: 0 },
  },
);

const teamMembers = makeJob(
  { syncId: "s", connector: "blackline", connectorId: "blackline" },
  { resourceType: "team", op: "members", parent: { type: "team", id: "7" } },
);

describe("BlackLine payloads are parsed at the boundary", () => {
  it("fails the page with the path of what is wrong, never passing a bad user on", async () => {
    const connector = await connectorAgainst([
      { id: 1, loginId: "ada@example.com", isActive: true },
      { id: 2, isActive: "yes" },
    ]);

    const error = await connector.runJob(usersJob, newRequestContext()).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect((error as Error).message).toMatch(
      /^BlackLine users, page 1, item 2: unexpected response body \(loginId: .*; isActive: /,
    );
  });

  it("reads numeric ids as strings and leaves absent optional fields out", async () => {
    const connector = await connectorAgainst([
      { id: 7, loginId: "x@example.com", firstName: null, defaultRoleId: 12 },
    ]);

    const page = await connector.runJob(usersJob, newRequestContext());

    expect(page.records).toEqual([
      {
        kind: "resource",
        type: "user",
        id: "7",
        displayName: "x@example.com",
        status: "enabled",
        user: { login: "x@example.com", emails: [] },
      },
      {
        kind: "grant",
        id: "role:12:assigned:user:7",
        entitlement: "role:12:assigned",
        principal: { type: "user", id: "7" },
      },
    ]);
  });

  it("refuses an unknown job and a bad cursor as InvalidJobError, before any request", async () => {
    const connector = await connectorAgainst([]);
    const run = { syncId: "s", connector: "blackline", connectorId: "blackline" };
    const ctx = newRequestContext();

    const unknown = makeJob(run, { resourceType: "user", op: "delete" });
    const badCursor = makeJob(run, { resourceType: "user", op: "list", cursor: { page: "2" } });
    const orphan = makeJob(run, { resourceType: "team", op: "members" });

    await expect(connector.runJob(unknown, ctx)).rejects.toThrow(
      new InvalidJobError("blackline has no job user/delete"),
    );
    await expect(connector.runJob(badCursor, ctx)).rejects.toThrow(
      /^user\/list: bad cursor \(page: /,
    );
    await expect(connector.runJob(orphan, ctx)).rejects.toBeInstanceOf(InvalidJobError);
    expect(ctx.counters.requests).toBe(0);
  });

  it("names an id that is not a usable path segment, with its list, page and place, and fails", async () => {
    const teamsPage3 = makeJob(
      { syncId: "s", connector: "blackline", connectorId: "blackline" },
      { resourceType: "team", op: "list", cursor: { page: 3, seen: 0 } },
    );
    for (const [badId, reason] of [
      [
        "..",
        /^BlackLine teams, page 3, item 2: unexpected response body \(id: the id "\.\." is not usable as a URL path segment \(a URL reads \. and \.\. as a move to another path\), so the sync stops rather than leave the record out\)$/,
      ],
      [".", /^BlackLine teams, page 3, item 2: .*the id "\." is not usable as a URL path segment/],
      ["\ud800", /^BlackLine teams, page 3, item 2: .*the id "\\ud800" is not well-formed Unicode/],
      ["7\n8", /^BlackLine teams, page 3, item 2: .*the id "7\\n8" holds control characters/],
      [
        2 ** 60,
        /item 2: .*\(id: the numeric id 1152921504606847000 is beyond the safe integer range/,
      ],
    ] as const) {
      const connector = await connectorAgainst([
        { id: 1, name: "Audit" },
        { id: badId, name: "Finance" },
      ]);
      const error = await connector
        .runJob(teamsPage3, newRequestContext())
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnexpectedResponseError);
      expect((error as Error).message).toMatch(reason);
      await server?.close();
    }
  });

  it("reads a membership page of full user records for its ids, numeric ones as text", async () => {
    const connector = await connectorAgainst([
      { id: 41, loginId: "zoë", fullName: "Zoë 名前", roles: [{ id: 2 }], isActive: true },
      { loginId: "b", id: "u-42", email: null },
    ]);

    const page = await connector.runJob(teamMembers, newRequestContext());

    expect(page.records.map((r) => r.kind === "grant" && r.principal.id)).toEqual(["41", "u-42"]);
  });

  it("fails a membership page that is not JSON as it fails any page", async () => {
    const connector = await connectorAnswering(() => ({
      status: 200,
      body: "<html>busy</html>",
      contentType: "text/html",
    }));

    await expect(connector.runJob(teamMembers, newRequestContext())).rejects.toThrow(
      /^BlackLine members of team 7, page 1 \(GET \/v1\/teams\/7\/users\): unexpected response body \(not valid JSON: 19 characters of text/,
    );
  });

  it("reads a membership request's error answer as JSON, as any error answer", async () => {
    const connector = await connectorAnswering(() => ({
      status: 404,
      body: { message: "team 7 is gone" },
    }));

    const failure = connector.runJob(teamMembers, newRequestContext());

    await expect(failure).rejects.toThrow(/team 7 is gone/);
    await expect(failure).rejects.not.toThrow(/"message"/);
  });

  it("names the membership list an unusable id came in", async () => {
    const connector = await connectorAgainst([{ id: ".." }]);
    const members = makeJob(
      { syncId: "s", connector: "blackline", connectorId: "blackline" },
      { resourceType: "team", op: "members", parent: { type: "team", id: "7" } },
    );

    await expect(connector.runJob(members, newRequestContext())).rejects.toThrow(
      /^BlackLine members of team 7, page 1, item 1: unexpected response body \(id: the id "\.\." is not usable/,
    );
  });
});
