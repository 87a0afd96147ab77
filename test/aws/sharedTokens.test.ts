// The bearer token an instance's worker containers share (lib/cloud/aws/sharedTokens.ts): sealed
// in the runs table on moto_server, against the BlackLine simulator's token endpoint. Each
// `BlacklineApi` stands for one container's connector.
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { awsClients } from "../../lib/cloud/aws/clients";
import { sharedTokens } from "../../lib/cloud/aws/sharedTokens";
import { loadBlacklineConfig } from "../../lib/connectors/blackline";
import { BlacklineApi } from "../../lib/connectors/blackline/BlacklineApi";
import { newRequestContext } from "../../lib/http";
import { type BlacklineSimulator, startBlacklineSimulator } from "../../lib/simulators/blackline";
import { FAST_RETRY } from "../helpers/blackline";
import { type Moto, startMotoWithPkSkTable } from "./harness";

const TABLE = "runs";
let moto: Moto;
let sim: BlacklineSimulator;

beforeAll(async () => {
  moto = await startMotoWithPkSkTable(TABLE);
  sim = await startBlacklineSimulator({ seed: 3, size: { users: 3, teams: 1, roles: 1 } });
});

afterAll(async () => {
  await sim?.close();
  await moto?.stop();
});

/** One container's token: its own connector, the instance's shared token. */
function container(connectorId: string, settings: Record<string, string>) {
  const api = new BlacklineApi(loadBlacklineConfig(settings), { retry: FAST_RETRY });
  const ctx = newRequestContext({ sharedTokens: sharedTokens(TABLE, connectorId, settings) });
  return { token: () => api.token(ctx), ctx };
}

describe("the token an instance's workers share", () => {
  it("is fetched once for many containers, and kept sealed: the table never holds it", async () => {
    const settings = sim.env();
    const before = sim.stats.byRoute.token ?? 0;
    const first = container("shared", settings);
    const token = await first.token();
    const others = await Promise.all([1, 2, 3].map(() => container("shared", settings).token()));

    expect(others.map((t) => t.value)).toEqual([token.value, token.value, token.value]);
    expect((sim.stats.byRoute.token ?? 0) - before).toBe(1);
    expect(first.ctx.counters.tokenRequests).toBe(1);
    const { Item } = await awsClients().dynamo.send(
      new GetCommand({ TableName: TABLE, Key: { pk: "token#shared", sk: "token" } }),
    );
    expect(JSON.stringify(Item)).not.toContain(token.value);
    expect(Item?.expiresAt).toBe(Math.ceil(token.expiresAt / 1000));
  });

  it("keeps the later of two tokens saved by containers at once", async () => {
    const tokens = sharedTokens(TABLE, "racing", sim.env());
    const later = { value: "later-token", expiresAt: Date.now() + 3_600_000 };
    await tokens.save(later);
    await tokens.save({ value: "earlier-token", expiresAt: later.expiresAt - 60_000 });

    expect(await tokens.load()).toEqual(later);
  });

  it("is not taken under other settings (a rotated password, any change): they fetch their own", async () => {
    const before = sim.stats.byRoute.token ?? 0;
    const old = await container("changed", sim.env()).token();
    const changed = { ...sim.env(), CONNECTOR_ACCOUNTING_RATE_LIMIT_WAIT_SECONDS: "30" };
    const fresh = await container("changed", changed).token();

    expect(fresh.value).not.toBe(old.value);
    expect((sim.stats.byRoute.token ?? 0) - before).toBe(2);
  });
});
