/**
 * Every Valimail write is verified: an answer that does not show the requested state is read
 * back, and a change that did not happen is a failure that says so, never `changed: true`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type ActionReply, runAction } from "../../../lib/actions";
import { connectorNamed } from "../../../lib/connectors";
import { newRequestContext } from "../../../lib/http";
import {
  startValimailSimulator,
  type ValimailSimUser,
  type ValimailSimulator,
} from "../../../lib/simulators/valimail";
import { FAST_RETRY } from "../../helpers/blackline";
import { valimailEnv } from "../../helpers/valimail";

let sim: ValimailSimulator;
afterEach(() => sim.close());

type Mode = "stale" | "ignored";

async function start(writeAnswers: Mode) {
  sim = await startValimailSimulator({ seed: 5, users: 40, writeAnswers });
}

function userWith(predicate: (u: ValimailSimUser) => boolean): ValimailSimUser {
  const user = [...sim.users.values()].find(predicate);
  if (!user) throw new Error("the simulator has no such user");
  return user;
}

function act(action: string, args: Record<string, string>): Promise<ActionReply> {
  const env = valimailEnv(sim, { CONNECTOR_PROVISIONING: "true" });
  return runAction(
    { requestId: "v", connectorId: "valimail", action, args },
    () => connectorNamed("valimail").provisioner(env, { retry: FAST_RETRY }),
    newRequestContext(),
  );
}

const cases: Array<{
  action: string;
  pick: (u: ValimailSimUser) => boolean;
  args: (u: ValimailSimUser) => Record<string, string>;
  result: (u: ValimailSimUser) => Record<string, unknown>;
  after: Partial<ValimailSimUser>;
  said: RegExp;
}> = [
  {
    action: "enable_user",
    pick: (u) => !u.active,
    args: (u) => ({ user_id: u.id }),
    result: (u) => ({ user_id: u.id, active: true, changed: true }),
    after: { active: true },
    said: /PATCH setting active to true .* still reads active: false/,
  },
  {
    action: "disable_user",
    pick: (u) => u.active,
    args: (u) => ({ user_id: u.id }),
    result: (u) => ({ user_id: u.id, active: false, changed: true }),
    after: { active: false },
    said: /PATCH setting active to false .* still reads active: true/,
  },
  {
    action: "grant",
    pick: (u) => u.memberType === "member",
    args: (u) => ({ user_id: u.id, entitlement_id: "member_type:owner:assigned" }),
    result: (u) => ({ user_id: u.id, member_type: "owner", changed: true }),
    after: { memberType: "owner" },
    said: /PATCH setting the member type to owner .* still reads member type member/,
  },
  {
    action: "revoke",
    pick: (u) => u.memberType === "owner",
    args: (u) => ({ user_id: u.id, entitlement_id: "member_type:owner:assigned" }),
    result: (u) => ({ user_id: u.id, member_type: "member", changed: true }),
    after: { memberType: "member" },
    said: /PATCH setting the member type to member .* still reads member type owner/,
  },
];

describe("Valimail writes answered with a stale body", () => {
  for (const c of cases) {
    it(`${c.action}: the change applied is read back and reported`, async () => {
      await start("stale");
      const user = userWith(c.pick);

      const reply = await act(c.action, c.args(user));

      expect(reply).toEqual({ requestId: "v", status: "succeeded", result: c.result(user) });
      expect(sim.users.get(user.id)).toMatchObject(c.after);
      expect(sim.stats.byRoute.patch).toBe(1);
      expect(sim.stats.byRoute.get).toBe(2); // the read before, the read back
    });
  }

  it("create_account: the account is read back, with the member type asked for", async () => {
    await start("stale");

    const reply = await act("create_account", {
      email: "stale@example.com",
      given_name: "S",
      family_name: "T",
      member_type: "owner",
    });

    const created = [...sim.users.values()].filter((u) => u.userName === "stale@example.com");
    expect(created).toMatchObject([{ memberType: "owner" }]);
    expect(reply).toEqual({
      requestId: "v",
      status: "succeeded",
      result: { user_id: created[0]?.id, created: true },
    });
    expect(sim.stats.byRoute.get).toBe(1);
  });
});

describe("Valimail writes ignored (nothing applied, stale body)", () => {
  for (const c of cases) {
    it(`${c.action}: upstream_error saying the change did not happen`, async () => {
      await start("ignored");
      const user = userWith(c.pick);
      const before = { ...user };

      const reply = await act(c.action, c.args(user));

      expect(reply).toEqual({
        requestId: "v",
        status: "failed",
        error: { code: "upstream_error", message: expect.stringMatching(c.said), retryable: true },
      });
      expect(sim.users.get(user.id)).toEqual(before);
    });
  }

  it("create_account: upstream_error saying the account does not exist", async () => {
    await start("ignored");

    const reply = await act("create_account", {
      email: "ghost@example.com",
      given_name: "G",
      family_name: "H",
      member_type: "owner",
    });

    expect(reply).toEqual({
      requestId: "v",
      status: "failed",
      error: {
        code: "upstream_error",
        message: expect.stringMatching(
          /answered the create of ghost@example\.com with user .* but has no such user/,
        ),
        retryable: true,
      },
    });
    expect([...sim.users.values()].some((u) => u.userName === "ghost@example.com")).toBe(false);
  });
});
