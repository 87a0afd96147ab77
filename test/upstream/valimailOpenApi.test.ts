/**
 * OpenAPI tier: every request the Valimail client sends, and every answer the Valimail simulator
 * gives, held against Valimail's own Configuration API description (its paths the connector uses,
 * copied verbatim into fixtures/valimail-openapi.yml) by openapi-request-validator and
 * openapi-response-validator. Where the description is wrong or silent, the deviation is listed
 * below by name with its reason; any other mismatch fails, and so does a listed deviation that
 * is no longer seen.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ActionRequest, runAction } from "../../lib/actions";
import { connectorNamed } from "../../lib/connectors";
import { newRequestContext } from "../../lib/http";
import {
  startValimailSimulator,
  type ValimailSimUser,
  type ValimailSimulator,
} from "../../lib/simulators/valimail";
import { type Exchange, startRecordingProxy } from "../helpers/recordingProxy";
import { syncValimail, valimailEnv } from "../helpers/valimail";
import { type Finding, ValimailContract } from "./valimailContract";

const LIST = "GET /accounts/{slug}/scim/v2/Users";
const CREATE = "POST /accounts/{slug}/scim/v2/Users";
const GET_ONE = "GET /accounts/{slug}/scim/v2/Users/{id}";
const PATCH = "PATCH /accounts/{slug}/scim/v2/Users/{id}";
const MEMBER_TYPE =
  /^body\.(Resources\[\d+\]\.)?urn:ietf:params:scim:schemas:extension:valimailuserextension:2\.0:User\.memberType$/;

interface KnownDeviation {
  name: string;
  reason: string;
  matches(finding: Finding): boolean;
}

/** Where the document is wrong or silent, and the client and simulator follow the real API. */
const KNOWN_DEVIATIONS: readonly KnownDeviation[] = [
  {
    name: "auth-global-bearer",
    reason:
      "The document's top-level `security: [bearerAuth]` covers every operation and `POST /auth` " +
      "has no `security: []` of its own, so formally /auth needs a bearer token. /auth is where the " +
      "token comes from, so the client sends none there, and the simulator asks for none.",
    matches: (f) =>
      f.side === "request" &&
      f.operation === "POST /auth" &&
      f.location === "header.authorization" &&
      f.keyword === "security",
  },
  {
    name: "patch-value-object",
    reason:
      "ScimPatchRequest types `Operations[].value` as `type: object`, yet the PATCH operation's " +
      "own description ('active (boolean: true/false)', memberType 'owner, member, or marketer') " +
      'and its example send `value: false` and `value: "owner"`, as RFC 7644 section 3.5.2 allows.',
    matches: (f) =>
      f.side === "request" &&
      f.operation === PATCH &&
      /^body\.Operations\[\d+\]\.value$/.test(f.location) &&
      f.keyword === "type" &&
      (typeof f.value === "boolean" || ["owner", "member", "marketer"].includes(f.value as string)),
  },
  {
    name: "member-type-marketer",
    reason:
      "ScimUser's memberType is `enum: [owner, member]`, while the POST description says " +
      "''marketer' is accepted only when enabled for the account' and the PATCH description lists " +
      "'owner, member, or marketer when enabled for the account': the client reads replies by the " +
      "descriptions, not by that enum.",
    matches: (f) =>
      f.side === "response" &&
      [LIST, CREATE, GET_ONE, PATCH].includes(f.operation) &&
      MEMBER_TYPE.test(f.location) &&
      f.keyword === "enum" &&
      f.value === "marketer",
  },
  {
    name: "list-paging-parameters",
    reason:
      "The list operation declares only `filter`; the client sends RFC 7644 section 3.4.2.4 " +
      "`startIndex` and `count`, an assumption: the description says nothing of paging, so the " +
      "list may come whole or in pages, and the client reads either.",
    matches: (f) =>
      f.side === "request" &&
      f.operation === LIST &&
      (f.location === "query.startIndex" || f.location === "query.count") &&
      f.keyword === "undeclared",
  },
];

const contract = new ValimailContract();
const exchanges: Exchange[] = [];
const replies: Record<string, unknown> = {};
let dir: string;

/** Runs a sync and the actions through a recording proxy in front of `sim`. */
async function drive(
  sim: ValimailSimulator,
  run: (env: Record<string, string>) => Promise<void>,
  beforeForward?: Parameters<typeof startRecordingProxy>[1],
) {
  const proxy = await startRecordingProxy(sim.url, beforeForward);
  try {
    await run(valimailEnv(sim, { CONNECTOR_EMAILAUTH_BASE_URL: proxy.url }));
  } finally {
    exchanges.push(...proxy.exchanges);
    await proxy.close();
    await sim.close();
  }
}

const action = (env: Record<string, string>, request: ActionRequest) =>
  runAction(request, () => connectorNamed("valimail").provisioner(env), newRequestContext());

function pick(sim: ValimailSimulator, predicate: (u: ValimailSimUser) => boolean) {
  const user = [...sim.users.values()].find(predicate);
  if (!user) throw new Error("the simulator has no such user");
  return user;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "valimail-openapi-"));
  const base = { connectorId: "valimail" };

  // An account that offers `marketer`, paged lists, every action.
  const sim = await startValimailSimulator({ seed: 11, users: 60, paging: true, maxCount: 25 });
  await drive(sim, async (env) => {
    const { summary } = await syncValimail(sim, dir, { env });
    replies.sync = summary;
    const on = { ...env, CONNECTOR_PROVISIONING: "true" };
    const active = pick(sim, (u) => u.active);
    const inactive = pick(sim, (u) => !u.active);
    const member = pick(sim, (u) => u.memberType === "member" && u.id !== active.id);
    const owner = pick(sim, (u) => u.memberType === "owner");
    const existing = pick(sim, () => true);
    const requests: ActionRequest[] = [
      { ...base, requestId: "disable", action: "disable_user", args: { user_id: active.id } },
      { ...base, requestId: "disable-again", action: "disable_user", args: { user_id: active.id } },
      { ...base, requestId: "enable", action: "enable_user", args: { user_id: inactive.id } },
      {
        ...base,
        requestId: "enable-404",
        action: "enable_user",
        args: { user_id: "no-such-user" },
      },
      {
        ...base,
        requestId: "create-new",
        action: "create_account",
        args: {
          email: "new.person@example.com",
          given_name: "Nëw",
          family_name: "Person",
          member_type: "member",
        },
      },
      {
        ...base,
        requestId: "create-marketer",
        action: "create_account",
        args: {
          email: "m@example.com",
          given_name: "Mark",
          family_name: "Eter",
          member_type: "marketer",
        },
      },
      {
        ...base,
        requestId: "create-existing",
        action: "create_account",
        args: { email: existing.userName, given_name: "Again", family_name: "Same" },
      },
      {
        ...base,
        requestId: "grant-owner",
        action: "grant",
        args: { user_id: member.id, entitlement_id: "member_type:owner:assigned" },
      },
      {
        ...base,
        requestId: "revoke-owner",
        action: "revoke",
        args: { user_id: owner.id, entitlement_id: "member_type:owner:assigned" },
      },
      {
        ...base,
        requestId: "grant-marketer",
        action: "grant",
        args: { user_id: member.id, entitlement_id: "member_type:marketer:assigned" },
      },
      {
        ...base,
        requestId: "grant-404",
        action: "grant",
        args: { user_id: "no-such-user", entitlement_id: "member_type:owner:assigned" },
      },
    ];
    for (const request of requests) replies[request.requestId] = await action(on, request);
  });

  // Someone else creates the account between the client's lookup and its POST: the 409.
  const racing = await startValimailSimulator({ seed: 14, users: 5 });
  const RACED = "raced@example.com";
  await drive(
    racing,
    async (env) => {
      replies["create-raced"] = await action(
        { ...env, CONNECTOR_PROVISIONING: "true" },
        {
          ...base,
          requestId: "create-raced",
          action: "create_account",
          args: { email: RACED, given_name: "Ra", family_name: "Ced" },
        },
      );
    },
    (method, url, body) => {
      if (method !== "POST" || !url.endsWith("/Users") || !body.includes(RACED)) return;
      const now = new Date().toISOString();
      racing.users.set("raced0001", {
        id: "raced0001",
        userName: RACED,
        givenName: "Ra",
        familyName: "Ced",
        active: true,
        memberType: "member",
        created: now,
        lastModified: now,
      });
    },
  );

  // An account without `marketer`: the PATCH's 400, and an unpaginated list.
  const plain = await startValimailSimulator({
    seed: 12,
    users: 15,
    marketer: false,
    paging: false,
  });
  await drive(plain, async (env) => {
    await syncValimail(plain, dir, { env });
    const member = pick(plain, (u) => u.memberType === "member");
    replies["grant-marketer-unavailable"] = await action(
      { ...env, CONNECTOR_PROVISIONING: "true" },
      {
        ...base,
        requestId: "grant-marketer-unavailable",
        action: "grant",
        args: { user_id: member.id, entitlement_id: "member_type:marketer:assigned" },
      },
    );
    replies["create-marketer-unavailable"] = await action(
      { ...env, CONNECTOR_PROVISIONING: "true" },
      {
        ...base,
        requestId: "create-marketer-unavailable",
        action: "create_account",
        args: {
          email: "mk@example.com",
          given_name: "M",
          family_name: "K",
          member_type: "marketer",
        },
      },
    );
  });

  // A rejected key: /auth's documented 400.
  const rejecting = await startValimailSimulator({ seed: 13, users: 3 });
  await drive(rejecting, async (env) => {
    replies["bad-key"] = await action(
      { ...env, CONNECTOR_PROVISIONING: "true", CONNECTOR_EMAILAUTH_APP_ID: "wrong-app-id" },
      { ...base, requestId: "bad-key", action: "enable_user", args: { user_id: "someone" } },
    );
  });
}, 60_000);

afterAll(() => rm(dir, { recursive: true, force: true }));

const findings = () => exchanges.flatMap((exchange) => contract.check(exchange));
const describeFinding = (f: Finding) =>
  `${f.side} ${f.operation}${f.status ? ` ${f.status}` : ""} ${f.location} [${f.keyword}] ${f.message}` +
  (f.value === undefined ? "" : ` (${JSON.stringify(f.value)})`);

describe("the Valimail client and simulator against Valimail's OpenAPI description", () => {
  it("drove every operation the client uses, with success and error answers", () => {
    const seen = new Set(
      exchanges.map(
        (e) =>
          `${e.method} ${e.status} ${new URL(e.url, "http://x").pathname.replace(/\/Users\/[^/]+$/, "/Users/{id}")}`,
      ),
    );
    expect([...seen].sort()).toEqual(
      expect.arrayContaining([
        "POST 200 /auth",
        "POST 400 /auth",
        "GET 200 /accounts/acme/scim/v2/Users",
        "POST 201 /accounts/acme/scim/v2/Users",
        "POST 400 /accounts/acme/scim/v2/Users",
        "POST 409 /accounts/acme/scim/v2/Users",
        "GET 200 /accounts/acme/scim/v2/Users/{id}",
        "GET 404 /accounts/acme/scim/v2/Users/{id}",
        "PATCH 200 /accounts/acme/scim/v2/Users/{id}",
        "PATCH 400 /accounts/acme/scim/v2/Users/{id}",
      ]),
    );
    expect(replies["create-existing"]).toMatchObject({
      status: "succeeded",
      result: { created: false },
    });
    expect(replies["create-raced"]).toMatchObject({
      status: "succeeded",
      result: { user_id: "raced0001", created: false },
    });
    expect(replies["create-marketer-unavailable"]).toMatchObject({ status: "failed" });
    expect(replies["enable-404"]).toMatchObject({ status: "failed" });
    expect(replies["grant-marketer-unavailable"]).toMatchObject({ status: "failed" });
    expect(replies["bad-key"]).toMatchObject({ status: "failed" });
    for (const id of [
      "disable",
      "enable",
      "create-new",
      "create-marketer",
      "grant-owner",
      "revoke-owner",
      "grant-marketer",
    ]) {
      expect(replies[id], id).toMatchObject({ status: "succeeded" });
    }
  });

  it("finds no mismatch outside the known deviations", () => {
    const unexplained = findings().filter((f) => !KNOWN_DEVIATIONS.some((d) => d.matches(f)));
    expect(unexplained.map(describeFinding)).toEqual([]);
  });

  it("sees every known deviation at least once (a stale entry fails)", () => {
    const all = findings();
    const counts = Object.fromEntries(
      KNOWN_DEVIATIONS.map((d) => [d.name, all.filter((f) => d.matches(f)).length]),
    );
    if (process.env.VALIMAIL_OPENAPI_REPORT)
      console.log({ exchanges: exchanges.length, findings: all.length, counts });
    for (const deviation of KNOWN_DEVIATIONS) {
      expect(counts[deviation.name], deviation.name).toBeGreaterThan(0);
    }
  });

  it("checks the validators on a hand-made mismatch, so a silent validator fails too", () => {
    const bad: Exchange = {
      method: "POST",
      url: "/accounts/acme/scim/v2/Users?bogus=1",
      requestHeaders: { "content-type": "application/scim+json", authorization: "Bearer t" },
      requestBody: JSON.stringify({ schemas: ["x"], userName: "not-an-email" }),
      status: 201,
      responseHeaders: { "content-type": "application/json" },
      responseBody: JSON.stringify({
        id: 7,
        userName: "a@b.c",
        schemas: [],
        meta: { created: "yesterday" },
      }),
    };
    const found = contract.check(bad).map((f) => `${f.side} ${f.location} ${f.keyword}`);
    expect(found).toEqual(
      expect.arrayContaining([
        "request query.bogus undeclared",
        "request body.name required",
        "request body.userName format",
        "response body.id type",
        "response body.meta.created format",
        "response header.content-type content-type",
      ]),
    );
    expect(
      contract.check({ ...bad, url: "/accounts/acme/scim/v2/Users/x", method: "DELETE" })[0],
    ).toMatchObject({ operation: "unmatched" });
    expect(contract.check({ ...bad, status: 418 }).some((f) => f.keyword === "status")).toBe(true);
  });
});
