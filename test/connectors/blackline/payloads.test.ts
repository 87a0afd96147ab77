import { afterEach, describe, expect, it } from "vitest";
import { BlacklineConnector, loadBlacklineConfig } from "../../../lib/connectors/blackline";
import { newRequestContext, UnexpectedResponseError } from "../../../lib/http";
import { type RunningSimulator, startSimServer } from "../../../lib/simulators/httpServer";
import { InvalidJobError, makeJob } from "../../../lib/sync";

let server: RunningSimulator | undefined;
afterEach(() => server?.close());

/** A BlackLine stand-in that answers one malformed users page (the simulator never does). */
async function connectorAgainst(items: unknown[]) {
  server = await startSimServer(
    (req) =>
      req.url.pathname.endsWith("/token")
        ? { status: 200, body: { access_token: "t0ken-value", expires_in: 3600 } }
        : { status: 200, body: { items, totalItems: items.length } },
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
  return new BlacklineConnector(config);
}

const usersJob = makeJob(
  { syncId: "s", connector: "blackline", connectorId: "blackline" },
  {
    resourceType: "user",
    op: "list",
    cursor: { page: 1, seen: 0 },
  },
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
      /^BlackLine GET \/v1\/users page 1: unexpected response body \(items\.1\.loginId: .*; items\.1\.isActive: /,
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

  it("refuses ids that are not usable path segments or cannot be read exactly, naming the item", async () => {
    for (const [badId, reason] of [
      ["..", /items\.0\.id: an id of \. or \.\. is not a usable path segment/],
      [".", /items\.0\.id: an id of \. or \.\. is not a usable path segment/],
      [2 ** 60, /items\.0\.id: a numeric id beyond the safe integer range/],
      ["7\n8", /items\.0\.id: an id with control characters/],
    ] as const) {
      const connector = await connectorAgainst([{ id: badId, loginId: "x@example.com" }]);
      const error = await connector.runJob(usersJob, newRequestContext()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnexpectedResponseError);
      expect((error as Error).message).toMatch(reason);
    }
  });
});
