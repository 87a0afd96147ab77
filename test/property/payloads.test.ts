import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BlacklineSyncer, loadBlacklineConfig } from "../../lib/connectors/blackline";
import { user as blacklineUser } from "../../lib/connectors/blackline/models";
import { upstreamId } from "../../lib/connectors/upstreamId";
import { loadValimailConfig, ValimailSyncer } from "../../lib/connectors/valimail";
import { scimUser } from "../../lib/connectors/valimail/models";
import { newRequestContext } from "../../lib/http";
import { runLocalSync, type Syncer } from "../../lib/sync";
import { readSnapshot } from "../helpers/snapshot";
import { makeTempDir } from "../helpers/tempDir";
import {
  type Answer,
  isDotSegment,
  pathSegments,
  type ReceivedRequest,
  type RecordingServer,
  startRecordingServer,
} from "./recordingServer";
import { expectTypedError, hostileText, IO_RUNS } from "./settings";

/**
 * Upstream payloads: whole syncs of each connector against a loopback server that serves generated
 * tenants (odd ids, wrong types, missing fields, wrong totals). Every sync ends with a snapshot or a
 * typed error, never another exception or a hang; every request goes to the configured host and to
 * one of the connector's endpoints, with ids from payloads as exactly one path segment; and the
 * snapshot's ids are the upstream's ids, text for text.
 */

/** Ids as an upstream might send them: plain, numeric, odd, hostile. */
const idArb = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^[a-z0-9]{1,4}$/) },
  { weight: 2, arbitrary: fc.nat(1_000_000) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      ".",
      "..",
      "%2e%2e",
      "a/b",
      "../users",
      "a b",
      "é",
      "?x=1",
      "#y",
      "//evil.example.com",
      "\u0000",
      "\ud800",
      "a\udc00b",
      "",
      2 ** 60,
      -1,
      1.5,
      null,
      true,
    ),
  },
  { weight: 1, arbitrary: hostileText },
);

/** A record with its fields sometimes dropped or replaced by anything. */
function loosely<T extends Record<string, unknown>>(model: fc.Arbitrary<T>) {
  return fc.oneof(
    { weight: 6, arbitrary: model },
    {
      weight: 1,
      arbitrary: fc
        .tuple(model, fc.string({ maxLength: 12 }), fc.anything())
        .map(([value, key, junk]) => ({
          ...value,
          [key]: junk,
        })),
    },
    { weight: 1, arbitrary: fc.anything() },
  );
}

/** A total as a server might send it: right, missing, or wrong. */
const totalArb = fc.constantFrom("right", "missing", "zero", "large", "string");
function total(kind: string, right: number): unknown {
  return { right, missing: undefined, zero: 0, large: right + 7, string: String(right) }[kind];
}

function page<T>(items: readonly T[], start: number, size: number): T[] {
  return items.slice(Math.max(0, start), Math.max(0, start) + Math.max(0, Math.min(size, 50)));
}

function queryNumber(target: string, name: string): number {
  return Number(new URL(target, "http://x").searchParams.get(name) ?? "NaN");
}

function idsOf(values: readonly unknown[]): Set<string> {
  const ids = new Set<string>();
  for (const value of values) {
    if (value && typeof value === "object" && "id" in value)
      ids.add(String((value as { id: unknown }).id));
  }
  return ids;
}

/** Checks every request of a sync: host, no dot segment, an allowed path. */
function expectRequests(server: RecordingServer, allowed: (segments: string[]) => boolean) {
  const origin = new URL(server.url).host;
  for (const address of server.fetched) expect(new URL(address).host).toBe(origin);
  for (const request of server.received) {
    expect(request.host).toBe(origin);
    const raw = (request.target.split("?")[0] ?? "").split("/").slice(1);
    expect(raw.some(isDotSegment), request.target).toBe(false);
    expect(allowed(pathSegments(request.target)), `unexpected request ${request.target}`).toBe(
      true,
    );
  }
}

async function syncOutcome(connector: Syncer, dir: string, name: string) {
  try {
    const { summary } = await runLocalSync({
      connector,
      ctx: newRequestContext(),
      outFile: join(dir, name),
      concurrency: 4,
    });
    return await readSnapshot(summary.snapshot);
  } catch (error) {
    expectTypedError(error);
    return undefined;
  }
}

let server: RecordingServer;
let dir: string;
beforeAll(async () => {
  server = await startRecordingServer();
  dir = await makeTempDir("ac-property-payloads-");
});
afterAll(() => server.close());

describe("upstream payloads (property)", () => {
  it("BlackLine's user schema: an id is refused, or kept as the exact text of what was sent", () => {
    fc.assert(
      fc.property(idArb, (id) => {
        const parsed = blacklineUser.safeParse({ id, loginId: "a" });
        if (!parsed.success) {
          expect(parsed.error.issues[0]?.path[0]).toBe("id");
          return;
        }
        expect(parsed.data.id).toBe(String(id));
        expect([".", ".."]).not.toContain(parsed.data.id);
        expect(upstreamId.safeParse(parsed.data.id).success).toBe(true);
      }),
    );
  });

  it("Valimail's user schema: a user, or a refusal naming the field", () => {
    fc.assert(
      fc.property(fc.anything(), idArb, (junk, id) => {
        for (const body of [junk, { id, userName: "a@b.c" }]) {
          const parsed = scimUser.safeParse(body);
          if (parsed.success) expect(typeof parsed.data.id).toBe("string");
          else expect(parsed.error.issues.length).toBeGreaterThan(0);
        }
      }),
    );
  });

  it("BlackLine sync: a snapshot of exactly the served ids, or a typed error; requests stay on the host and its endpoints", async () => {
    const userModel = fc.record(
      {
        id: idArb,
        loginId: fc.oneof(fc.constant("ada"), hostileText),
        firstName: fc.option(fc.string(), { nil: undefined }),
        isActive: fc.oneof(fc.boolean(), fc.constant(null)),
        defaultRoleId: fc.option(idArb, { nil: undefined }),
        roles: fc.option(fc.array(fc.oneof(idArb, fc.record({ id: idArb })), { maxLength: 2 }), {
          nil: undefined,
        }),
      },
      { requiredKeys: ["id", "loginId"] },
    );
    const tenant = fc.record({
      users: fc.array(loosely(userModel), { maxLength: 6 }),
      teams: fc.array(loosely(fc.record({ id: idArb, name: fc.string() })), { maxLength: 4 }),
      roles: fc.array(loosely(fc.record({ id: idArb, name: fc.string() })), { maxLength: 3 }),
      members: fc.array(fc.array(idArb, { maxLength: 3 }), { maxLength: 4 }),
      total: totalArb,
      token: fc.oneof(
        {
          weight: 8,
          arbitrary: fc.constant({ access_token: "t-1", expires_in: 3600, token_type: "Bearer" }),
        },
        { weight: 1, arbitrary: fc.anything() },
      ),
    });
    const config = loadBlacklineConfig({
      CONNECTOR_ACCOUNTING_CLIENT_ID: "c",
      CONNECTOR_ACCOUNTING_CLIENT_SECRET: "property-secret",
      CONNECTOR_ACCOUNTING_USERNAME: "u",
      CONNECTOR_ACCOUNTING_API_KEY: "property-key",
      CONNECTOR_ACCOUNTING_SCOPE: "DataIngestionAPI instance_3f2504e0-4f89-11d3-9a0c-0305e82c3301",
      CONNECTOR_ACCOUNTING_BASE_URL: server.url,
      CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0",
      CONNECTOR_ACCOUNTING_PAGE_SIZE: "2",
    });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(tenant, async (t) => {
        server.reset();
        const lists: Record<string, readonly unknown[]> = {
          users: t.users,
          teams: t.teams,
          roles: t.roles,
        };
        const listed = new Set([...idsOf(t.users), ...idsOf(t.teams)]);
        server.answer = (request: ReceivedRequest): Answer => {
          const segments = pathSegments(request.target);
          if (segments.join("/") === "authorize/connect/token")
            return { status: 200, body: t.token };
          const size = queryNumber(request.target, "pageSize");
          const start = (queryNumber(request.target, "page") - 1) * size;
          if (segments.length === 2) {
            const items = lists[segments[1] as string] ?? [];
            return {
              status: 200,
              body: { items: page(items, start, size), totalItems: total(t.total, items.length) },
            };
          }
          const teamIndex = t.teams.findIndex(
            (team) =>
              team &&
              typeof team === "object" &&
              String((team as { id?: unknown }).id) === segments[2],
          );
          const items = (t.members[teamIndex] ?? []).map((id) => ({ id }));
          return {
            status: 200,
            body: { items: page(items, start, size), totalItems: total(t.total, items.length) },
          };
        };
        const connector = new BlacklineSyncer(config, {
          retry: { maxAttempts: 1 },
          timeoutMs: 2_000,
        });
        const lines = await syncOutcome(connector, dir, `blackline-${run++}.jsonl`);
        expectRequests(server, (segments) => {
          const path = segments.join("/");
          if (["authorize/connect/token", "v1/users", "v1/teams", "v1/roles"].includes(path))
            return true;
          return (
            segments.length === 4 &&
            segments[0] === "v1" &&
            listed.has(segments[2] as string) &&
            ((segments[1] === "teams" && segments[3] === "users") ||
              (segments[1] === "users" && segments[3] === "teams"))
          );
        });
        if (!lines) return;
        const served = new Set([...idsOf(t.users), ...idsOf(t.teams), ...idsOf(t.roles)]);
        for (const line of lines) {
          if (line.kind === "resource")
            expect(served.has(String(line.id)), `resource ${line.id}`).toBe(true);
        }
        expect(lines.at(-1)?.kind).toBe("sync_end");
      }),
      IO_RUNS,
    );
  });

  it("Valimail sync: a snapshot of exactly the served ids, or a typed error; SCIM list answers of any shape", async () => {
    const userModel = fc.record(
      {
        id: idArb,
        userName: fc.oneof(fc.constant("ada@example.com"), hostileText),
        active: fc.oneof(fc.boolean(), fc.constant(null)),
        "urn:ietf:params:scim:schemas:extension:valimailuserextension:2.0:User": fc.oneof(
          fc.record({
            memberType: fc.oneof(fc.constantFrom("owner", "member", "marketer"), hostileText),
          }),
          fc.constant(null),
        ),
      },
      { requiredKeys: ["id", "userName"] },
    );
    const tenant = fc.record({
      users: fc.array(loosely(userModel), { maxLength: 7 }),
      total: totalArb,
      shape: fc.constantFrom(
        "normal",
        "normal",
        "normal",
        "no-resources",
        "resources-not-array",
        "junk",
      ),
      junk: fc.anything(),
    });
    const config = loadValimailConfig({
      CONNECTOR_EMAILAUTH_CLIENT_ID: "property-client",
      CONNECTOR_EMAILAUTH_APP_ID: "property-app",
      CONNECTOR_EMAILAUTH_SLUG: "acme",
      CONNECTOR_EMAILAUTH_BASE_URL: server.url,
      CONNECTOR_EMAILAUTH_REQUESTS_PER_SECOND: "0",
      CONNECTOR_EMAILAUTH_PAGE_SIZE: "2",
    });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(tenant, async (t) => {
        server.reset();
        server.answer = (request) => {
          if (request.target === "/auth") {
            return {
              status: 200,
              body: { token: "t-1", "expires-at": new Date(Date.now() + 3_600_000).toISOString() },
            };
          }
          const start = queryNumber(request.target, "startIndex") - 1;
          const count = queryNumber(request.target, "count");
          const resources = page(t.users, start, count);
          const totalResults = total(t.total, t.users.length);
          switch (t.shape) {
            case "no-resources":
              return { status: 200, body: { totalResults } };
            case "resources-not-array":
              return { status: 200, body: { totalResults, Resources: t.junk } };
            case "junk":
              return { status: 200, body: t.junk };
            default:
              return {
                status: 200,
                body: {
                  totalResults,
                  startIndex: start + 1,
                  itemsPerPage: count,
                  Resources: resources,
                },
              };
          }
        };
        const connector = new ValimailSyncer(config, {
          retry: { maxAttempts: 1 },
          timeoutMs: 2_000,
        });
        const lines = await syncOutcome(connector, dir, `valimail-${run++}.jsonl`);
        expectRequests(server, (segments) =>
          ["auth", "accounts/acme/scim/v2/Users"].includes(segments.join("/")),
        );
        if (!lines) return;
        const served = idsOf(t.users);
        for (const line of lines) {
          if (line.kind === "resource" && line.type === "user") {
            expect(served.has(String(line.id)), `user ${line.id}`).toBe(true);
          }
        }
        expect(lines.at(-1)?.kind).toBe("sync_end");
      }),
      IO_RUNS,
    );
  });
});
