import { afterEach, describe, expect, it } from "vitest";
import { runAction } from "../../../lib/actions";
import { connectorNamed } from "../../../lib/connectors";
import { newRequestContext } from "../../../lib/http";
import { startValimailSimulator, type ValimailSimulator } from "../../../lib/simulators/valimail";
import { FAST_RETRY } from "../../helpers/blackline";
import { cli } from "../../helpers/cli";
import { valimailEnv } from "../../helpers/valimail";

let sim: ValimailSimulator;
afterEach(() => sim.close());

const ON = { CONNECTOR_PROVISIONING: "true" };
const MEMBER_TYPE_PATH =
  "urn:ietf:params:scim:schemas:extension:valimailuserextension:2.0:User.memberType";

async function start(options: Parameters<typeof startValimailSimulator>[0] = {}) {
  sim = await startValimailSimulator({ seed: 5, users: 40, ...options });
  return sim;
}

/** Runs a write command and parses the one JSON reply line it prints. */
async function write(argv: string[], extra: Record<string, string> = ON) {
  const run = await cli(argv, valimailEnv(sim, extra));
  const lines = run.stdout.trim().split("\n");
  expect(lines).toHaveLength(1);
  return { ...run, reply: JSON.parse(lines[0] ?? "{}") };
}

const userWith = (
  predicate: (u: ValimailSimulator["users"] extends Map<string, infer U> ? U : never) => boolean,
) => {
  const user = [...sim.users.values()].find(predicate);
  if (!user) throw new Error("the simulator has no such user");
  return user;
};

describe("Valimail actions", () => {
  it("disable_user and enable_user change exactly `active`, and a repeat writes nothing", async () => {
    await start();
    const user = userWith((u) => u.active);
    const before = { ...user };

    const first = await write([
      "action",
      "valimail",
      "disable_user",
      "--user-id",
      user.id,
      "--request-id",
      "r-1",
    ]);
    const writesAfterFirst = sim.stats.writes;
    const again = await write([
      "action",
      "valimail",
      "disable_user",
      "--user-id",
      user.id,
      "--request-id",
      "r-1",
    ]);
    const enable = await write(["action", "valimail", "enable_user", "--user-id", user.id]);

    expect(first.code).toBe(0);
    expect(first.reply).toEqual({
      requestId: "r-1",
      status: "succeeded",
      result: { user_id: user.id, active: false, changed: true },
    });
    expect(again.reply.result).toEqual({ user_id: user.id, active: false, changed: false });
    expect(sim.stats.writes).toBe(writesAfterFirst + 1); // the enable only
    expect(writesAfterFirst).toBe(1);
    expect(enable.reply.result).toEqual({ user_id: user.id, active: true, changed: true });
    expect(sim.users.get(user.id)).toMatchObject({
      ...before,
      active: true,
      lastModified: expect.any(String),
    });
    expect(sim.writeLog.map((w) => w.body)).toEqual([
      {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        Operations: [{ op: "replace", path: "active", value: false }],
      },
      {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        Operations: [{ op: "replace", path: "active", value: true }],
      },
    ]);
  });

  it("create-account creates once; a repeat finds the account and writes nothing", async () => {
    await start();

    const first = await write([
      "create-account",
      "valimail",
      "--email",
      "new.hire@example.com",
      "--given-name",
      "Zoë",
      "--family-name",
      "Åberg",
      "--member-type",
      "owner",
    ]);
    const again = await write([
      "create-account",
      "valimail",
      "--email",
      "new.hire@example.com",
      "--given-name",
      "Zoë",
      "--family-name",
      "Åberg",
    ]);

    expect(first.code).toBe(0);
    expect(first.reply.result).toEqual({ user_id: expect.any(String), created: true });
    expect(sim.users.get(first.reply.result.user_id)).toMatchObject({
      userName: "new.hire@example.com",
      givenName: "Zoë",
      familyName: "Åberg",
      memberType: "owner",
      active: true,
    });
    expect(again.reply.result).toEqual({ user_id: first.reply.result.user_id, created: false });
    expect(sim.stats.byRoute.create).toBe(1);
  });

  it("a 409 on create (another creator won the race) is 'already exists' with that account's id", async () => {
    // Both requests look first, find nothing, and POST; the simulator's latency makes them overlap.
    await start({ faults: { latencyMs: 250 } });
    const env = valimailEnv(sim, ON);
    const request = (requestId: string) => ({
      requestId,
      connectorId: "valimail",
      action: "create_account",
      args: { email: "race@example.com", given_name: "Ada", family_name: "Race" },
    });

    const replies = await Promise.all(
      ["a", "b"].map((id) =>
        runAction(
          request(id),
          () => connectorNamed("valimail").provisioner(env),
          newRequestContext(),
        ),
      ),
    );

    expect(sim.stats.byRoute.create).toBe(2);
    const results = replies.map((r) => (r.status === "succeeded" ? r.result : r.error));
    expect(results).toEqual(
      expect.arrayContaining([
        { user_id: expect.any(String), created: true },
        { user_id: expect.any(String), created: false },
      ]),
    );
    expect(new Set(results.map((r) => (r as { user_id: string }).user_id)).size).toBe(1);
    expect([...sim.users.values()].filter((u) => u.userName === "race@example.com")).toHaveLength(
      1,
    );
  });

  it("grant replaces the member type with one PATCH of the dot-form path; a repeat writes nothing", async () => {
    await start();
    const user = userWith((u) => u.memberType === "member");

    const first = await write([
      "grant",
      "valimail",
      "--user-id",
      user.id,
      "--entitlement",
      "member_type:owner:assigned",
    ]);
    const again = await write([
      "grant",
      "valimail",
      "--user-id",
      user.id,
      "--entitlement",
      "member_type:owner:assigned",
    ]);

    expect(first.reply.result).toEqual({ user_id: user.id, member_type: "owner", changed: true });
    expect(again.reply.result).toEqual({ user_id: user.id, member_type: "owner", changed: false });
    expect(sim.users.get(user.id)?.memberType).toBe("owner");
    expect(sim.writeLog).toEqual([
      {
        method: "PATCH",
        path: `/accounts/acme/scim/v2/Users/${user.id}`,
        body: {
          schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
          Operations: [{ op: "replace", path: MEMBER_TYPE_PATH, value: "owner" }],
        },
      },
    ]);
  });

  it("revoke of owner or marketer falls back to member; revoking member is refused; revoking a type not held writes nothing", async () => {
    await start();
    const owner = userWith((u) => u.memberType === "owner");
    const marketer = userWith((u) => u.memberType === "marketer");
    const member = userWith((u) => u.memberType === "member");

    const revokeOwner = await write([
      "revoke",
      "valimail",
      "--user-id",
      owner.id,
      "--entitlement",
      "member_type:owner:assigned",
    ]);
    const revokeMarketer = await write([
      "revoke",
      "valimail",
      "--user-id",
      marketer.id,
      "--entitlement",
      "member_type:marketer:assigned",
    ]);
    const writes = sim.stats.writes;
    const revokeNotHeld = await write([
      "revoke",
      "valimail",
      "--user-id",
      member.id,
      "--entitlement",
      "member_type:owner:assigned",
    ]);
    const revokeMember = await write([
      "revoke",
      "valimail",
      "--user-id",
      member.id,
      "--entitlement",
      "member_type:member:assigned",
    ]);

    expect(revokeOwner.reply.result).toEqual({
      user_id: owner.id,
      member_type: "member",
      changed: true,
    });
    expect(revokeMarketer.reply.result).toEqual({
      user_id: marketer.id,
      member_type: "member",
      changed: true,
    });
    expect(sim.users.get(owner.id)?.memberType).toBe("member");
    expect(sim.users.get(marketer.id)?.memberType).toBe("member");
    expect(revokeNotHeld.reply.result).toEqual({
      user_id: member.id,
      member_type: "member",
      changed: false,
    });
    expect(revokeMember.code).toBe(1);
    expect(revokeMember.reply.error).toEqual({
      code: "revoke_not_allowed",
      message: expect.stringMatching(/grant another member type instead/),
      retryable: false,
    });
    expect(sim.stats.writes).toBe(writes);
  });

  it("marketer is granted where the account offers it, and refused clearly where it does not", async () => {
    await start({ marketer: false });
    const user = userWith((u) => u.memberType === "member");

    const grant = await write([
      "grant",
      "valimail",
      "--user-id",
      user.id,
      "--entitlement",
      "member_type:marketer:assigned",
    ]);
    const create = await write([
      "create-account",
      "valimail",
      "--email",
      "m@example.com",
      "--given-name",
      "M",
      "--family-name",
      "K",
      "--member-type",
      "marketer",
    ]);

    expect(grant.code).toBe(1);
    expect(grant.reply.error).toMatchObject({ code: "member_type_unavailable", retryable: false });
    expect(grant.reply.error.message).toMatch(/does not offer the marketer member type/);
    expect(create.reply.error).toMatchObject({ code: "member_type_unavailable" });
    expect(sim.users.get(user.id)?.memberType).toBe("member");
    await sim.close();

    await start({ marketer: true });
    const other = userWith((u) => u.memberType === "member");
    const granted = await write([
      "grant",
      "valimail",
      "--user-id",
      other.id,
      "--entitlement",
      "member_type:marketer:assigned",
    ]);
    expect(granted.reply.result).toEqual({
      user_id: other.id,
      member_type: "marketer",
      changed: true,
    });
  });

  it("an unknown user is not_found", async () => {
    await start();
    const run = await write(["action", "valimail", "enable_user", "--user-id", "0000000000"]);
    expect(run.code).toBe(1);
    expect(run.reply.error).toMatchObject({ code: "not_found", retryable: false });
  });
});

describe("Valimail writes are refused unless provisioning is on", () => {
  const commands = (id: string) => [
    ["action", "valimail", "enable_user", "--user-id", id],
    ["action", "valimail", "disable_user", "--user-id", id],
    [
      "create-account",
      "valimail",
      "--email",
      "x@example.com",
      "--given-name",
      "X",
      "--family-name",
      "Y",
    ],
    ["grant", "valimail", "--user-id", id, "--entitlement", "member_type:owner:assigned"],
    ["revoke", "valimail", "--user-id", id, "--entitlement", "member_type:owner:assigned"],
  ];

  for (const [setting, value] of [
    ["unset", undefined],
    ["TRUE", "TRUE"],
    ["1", "1"],
  ] as const) {
    it(`CONNECTOR_PROVISIONING ${setting}: every write is refused before any request`, async () => {
      await start();
      const user = userWith((u) => u.active);
      for (const argv of commands(user.id)) {
        const run = await write(argv, value === undefined ? {} : { CONNECTOR_PROVISIONING: value });
        expect(run.code).toBe(1);
        expect(run.reply.error).toMatchObject({ code: "provisioning_disabled", retryable: false });
        expect(run.reply.error.message).toMatch(/CONNECTOR_PROVISIONING/);
      }
      expect(sim.stats.requests).toBe(0);
    });
  }
});

describe("hostile input is rejected before any request", () => {
  for (const userId of ["../admin", "a/b", "abc?x=1", "abc#frag", "ab c", "..", " abc", "a\tb"]) {
    it(`user id ${JSON.stringify(userId)}`, async () => {
      await start();
      const run = await write(["action", "valimail", "disable_user", "--user-id", userId]);
      expect(run.code).toBe(2);
      expect(run.reply.error).toMatchObject({ code: "invalid_request", retryable: false });
      expect(run.reply.error.message).toMatch(/^args\.user_id: /);
      expect(sim.stats.requests).toBe(0);
    });
  }

  it("an email that is not one, an unknown member type, and an entitlement of another shape", async () => {
    await start();
    const id = userWith(() => true).id;
    const runs = [
      await write([
        "create-account",
        "valimail",
        "--email",
        "not-an-email",
        "--given-name",
        "A",
        "--family-name",
        "B",
      ]),
      await write([
        "create-account",
        "valimail",
        "--email",
        "a@example.com",
        "--given-name",
        "A",
        "--family-name",
        "B",
        "--member-type",
        "admin",
      ]),
      await write([
        "grant",
        "valimail",
        "--user-id",
        id,
        "--entitlement",
        "member_type:admin:assigned",
      ]),
      await write(["grant", "valimail", "--user-id", id, "--entitlement", "team:7:member"]),
      await write(["grant", "valimail", "--user-id", id, "--entitlement", "owner"]),
    ];

    expect(runs.map((r) => r.code)).toEqual([2, 2, 2, 2, 2]);
    expect(runs.map((r) => r.reply.error.code)).toEqual(Array(5).fill("invalid_request"));
    expect(runs[0]?.reply.error.message).toMatch(/args\.email: must be an email address/);
    expect(runs[1]?.reply.error.message).toMatch(/"admin" is not a Valimail member type/);
    expect(sim.stats.requests).toBe(0);
  });
});

describe("Valimail actions under faults", () => {
  it("a create whose answer is lost is looked up, not POSTed again", async () => {
    // Requests: 1 /auth, 2 the lookup, 3 the POST: carried out, then answered 502.
    await start({ faults: { lostAnswers: { every: 3 } } });
    const env = valimailEnv(sim, ON);

    const reply = await runAction(
      {
        requestId: "lost",
        connectorId: "valimail",
        action: "create_account",
        args: { email: "lost@example.com", given_name: "L", family_name: "A" },
      },
      () => connectorNamed("valimail").provisioner(env, { retry: FAST_RETRY }),
      newRequestContext(),
    );

    const created = [...sim.users.values()].filter((u) => u.userName === "lost@example.com");
    expect(created).toHaveLength(1);
    expect(reply).toEqual({
      requestId: "lost",
      status: "succeeded",
      result: { user_id: created[0]?.id, created: true },
    });
    expect(sim.stats.byRoute.create).toBe(1);
  });

  it("a PATCH whose answer is lost is repeated safely (replace is idempotent)", async () => {
    // Requests: 1 /auth, 2 the read, 3 the PATCH: carried out, then answered 502; 4 the repeat.
    await start({ faults: { lostAnswers: { every: 3 } } });
    const user = userWith((u) => u.active);

    const reply = await runAction(
      {
        requestId: "p",
        connectorId: "valimail",
        action: "disable_user",
        args: { user_id: user.id },
      },
      () => connectorNamed("valimail").provisioner(valimailEnv(sim, ON), { retry: FAST_RETRY }),
      newRequestContext(),
    );

    expect(reply).toMatchObject({
      status: "succeeded",
      result: { user_id: user.id, active: false, changed: true },
    });
    expect(sim.stats.byRoute.patch).toBe(2);
    expect(sim.users.get(user.id)?.active).toBe(false);
  });

  it("survive 429s, 5xx bursts and token expiry, and still write once", async () => {
    await start({
      tokenLifetimeSeconds: 1,
      faults: { latencyMs: 150, rateLimit: { every: 4 }, serverErrors: { every: 6, burst: 2 } },
    });
    const env = valimailEnv(sim, ON);
    // One provisioner for the three actions, so its one-second token must be refreshed on the way.
    const shared = connectorNamed("valimail").provisioner(env, { retry: FAST_RETRY });
    const provisioner = () => shared;
    const user = userWith((u) => u.active && u.memberType === "member");

    const disable = await runAction(
      {
        requestId: "1",
        connectorId: "valimail",
        action: "disable_user",
        args: { user_id: user.id },
      },
      provisioner,
      newRequestContext(),
    );
    const grant = await runAction(
      {
        requestId: "2",
        connectorId: "valimail",
        action: "grant",
        args: { user_id: user.id, entitlement_id: "member_type:owner:assigned" },
      },
      provisioner,
      newRequestContext(),
    );
    const create = await runAction(
      {
        requestId: "3",
        connectorId: "valimail",
        action: "create_account",
        args: { email: "f@example.com", given_name: "F", family_name: "G" },
      },
      provisioner,
      newRequestContext(),
    );

    expect([disable.status, grant.status, create.status]).toEqual([
      "succeeded",
      "succeeded",
      "succeeded",
    ]);
    expect(sim.users.get(user.id)).toMatchObject({ active: false, memberType: "owner" });
    expect([...sim.users.values()].filter((u) => u.userName === "f@example.com")).toHaveLength(1);
    expect(sim.stats.byRoute.auth).toBeGreaterThan(1);
  });
});
