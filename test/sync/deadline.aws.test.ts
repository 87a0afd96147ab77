// The sync deadline in the cloud runtime, on moto_server: the scheduler ends a run older than its
// instance's CONNECTOR_<APP>_SYNC_DEADLINE as `error`, with the reason a local sync gives, and
// nothing of it is uploaded; a run within its deadline is left to go on. The run's age is set in
// its record (as the stall test sets its last progress), so nothing waits for a clock.
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InstanceRegistry, RunStore, type SweepAnswer } from "../../lib/cloud";
import { type BlacklineSimulator, startBlacklineSimulator } from "../../lib/simulators/blackline";
import { type PlatformSimulator, startPlatformSimulator } from "../../lib/simulators/platform";
import {
  awsClientConfig,
  type Moto,
  runOperator,
  type Stack,
  startStackOnMoto,
} from "../aws/harness";

let moto: Moto;
let stack: Stack;
let upstream: BlacklineSimulator;
let platformSim: PlatformSimulator;

beforeAll(async () => {
  ({ moto, stack } = await startStackOnMoto({ stage: "dev" }));
  upstream = await startBlacklineSimulator({ seed: 6, size: { users: 20, teams: 2, roles: 2 } });
  platformSim = await startPlatformSimulator();
});

afterAll(async () => {
  await upstream?.close();
  await platformSim?.close();
  await stack?.close();
  await moto?.stop();
});

const operator = (argv: string[], env: Record<string, string> = {}) =>
  runOperator(stack, argv, env);

/** Registers an instance and starts its run, whose workers are not run; returns the sync id. */
async function startedRun(connectorId: string, env: Record<string, string>): Promise<string> {
  const put = await operator(["put-instance", connectorId, "blackline", "--no-sync"], {
    ...upstream.env(),
    ...platformSim.env(),
    ...env,
  });
  expect(put.code).toBe(0);
  const sync = await operator(["sync", connectorId]);
  const answer = JSON.parse(sync.stdout.trim().split("\n").at(-1) as string) as {
    syncId: string;
    status: string;
  };
  expect(answer.status).toBe("started");
  return answer.syncId;
}

/** The run started `minutes` ago and made progress just now: old, but not stalled. */
async function ageRun(syncId: string, minutes: number): Promise<void> {
  const dynamo = DynamoDBDocumentClient.from(new DynamoDBClient(awsClientConfig(moto.endpoint)));
  await dynamo.send(
    new UpdateCommand({
      TableName: stack.outputs.RunsTableName as string,
      Key: { pk: `run#${syncId}`, sk: "run" },
      UpdateExpression: "SET startedAt = :started, lastProgressAt = :now",
      ExpressionAttributeValues: {
        ":started": new Date(Date.now() - minutes * 60_000).toISOString(),
        ":now": new Date().toISOString(),
      },
    }),
  );
  dynamo.destroy();
}

describe("the scheduler and the sync deadline", () => {
  const scheduled = { "detail-type": "Scheduled Event", source: "aws.events", detail: {} };

  it("ends a run older than its deadline as error, naming the variable, and uploads nothing", async () => {
    const late = await startedRun("bl-late", { CONNECTOR_ACCOUNTING_SYNC_DEADLINE: "10m" });
    const onTime = await startedRun("bl-on-time", {});
    await ageRun(late, 11);
    await ageRun(onTime, 11);

    const sweep = (await stack.invokeByName(
      stack.outputs.SchedulerFunctionName as string,
      scheduled,
    )) as SweepAnswer;
    await stack.drainQueue("scheduler");

    expect([...sweep.checks].sort()).toEqual(["bl-late", "bl-on-time"]);
    const runs = new RunStore(stack.outputs.RunsTableName as string);
    expect((await runs.get(late))?.status).toBe("error");
    expect((await runs.get(onTime))?.status).not.toBe("error");
    expect(platformSim.uploads.size).toBe(0);
    expect(platformSim.labels.at(-1)).toMatchObject({ label: "error" });
    expect(platformSim.labels.at(-1)?.detail).toBe(
      "the sync did not finish within 10m, its deadline (CONNECTOR_ACCOUNTING_SYNC_DEADLINE), so it was stopped and nothing was published: the previous snapshot stands. If the tenant is that large or the upstream that slow, raise CONNECTOR_ACCOUNTING_SYNC_DEADLINE (at most 168h); the next sync starts on schedule",
    );
    const registry = new InstanceRegistry(stack.outputs.InstancesTableName as string);
    expect(await registry.get("bl-late")).toMatchObject({
      label: "error",
      lastSyncStatus: "error",
    });
    expect((await registry.get("bl-on-time"))?.currentSyncId).toBe(onTime);
  });
});
