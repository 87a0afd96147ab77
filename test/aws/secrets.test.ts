// No secret in the cloud runtime's output, on moto_server: instances registered with distinctive
// secrets, every function at POWERTOOLS_LOG_LEVEL=DEBUG, a sync of each connector through the real
// queues, the action function for each connector, and upstreams and a platform that fail and echo
// what they were sent. The functions' logs, the operator commands' output, the replies, the runs
// and registry tables, and everything the platform received hold no form of any secret or token.
// (The instance's Secrets Manager secret holds them by design and is not read here.)

import { DynamoDBClient, ScanCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ActionReply } from "../../lib/actions";
import type { CliRun } from "../helpers/cli";
import { echoAnswer } from "../secrets/echoUpstream";
import { type SecretUpstreams, startSecretUpstreams } from "../secrets/secretUpstreams";
import { awsClientConfig, type Moto, runOperator, type Stack, startStackOnMoto } from "./harness";

let moto: Moto;
let stack: Stack;
let up: SecretUpstreams;

beforeAll(async () => {
  ({ moto, stack } = await startStackOnMoto({ stage: "dev" }));
  for (const key of Object.keys(stack.functions)) {
    await stack.updateEnvironment(key, { POWERTOOLS_LOG_LEVEL: "DEBUG" });
  }
  // Each instance is registered with the platform's variables, the secret among them.
  up = await startSecretUpstreams({
    tempPrefix: "ac-secrets-aws-",
    blackline: {
      size: { users: 40, teams: 5, roles: 3 },
      // Some answers fail at first, so the retries' debug lines are written too.
      faults: { serverErrors: { every: 7, burst: 1 }, perRequest: true },
    },
    valimailAppId: "plain",
    platformVariables: "secret variable",
  });
});

afterAll(async () => {
  await up?.close();
  await stack?.close();
  await moto?.stop();
});

async function operator(
  what: string,
  argv: string[],
  env: Record<string, string> = {},
): Promise<CliRun> {
  const run = await runOperator(stack, [...argv, "--verbose"], env);
  up.record(what, run);
  return run;
}

async function runQueues() {
  await stack.drainQueue("syncWorker");
  await stack.drainQueue("finalize");
}

async function action(what: string, request: unknown): Promise<ActionReply> {
  const reply = (await stack.invokeByName(
    stack.outputs.ActionFunctionName as string,
    request,
  )) as ActionReply;
  up.outputs.push({ what: `${what} reply`, text: JSON.stringify(reply) });
  return reply;
}

describe("no secret reaches the cloud runtime's output (POWERTOOLS_LOG_LEVEL=DEBUG)", () => {
  it("syncs of each connector and their actions", async () => {
    for (const clientAuth of ["body", "basic"] as const) {
      const put = await operator(
        `put-instance bl-${clientAuth}`,
        ["put-instance", `bl-${clientAuth}`, "blackline"],
        up.blacklineEnv(up.blackline.url, clientAuth),
      );
      expect(put.code, put.stderr).toBe(0);
    }
    const put = await operator(
      "put-instance vm",
      ["put-instance", "vm", "valimail"],
      up.valimailEnv(up.valimail.url),
    );
    expect(put.code, put.stderr).toBe(0);
    await runQueues();
    expect(up.platform.uploads.size).toBe(3);

    const user = [...up.valimail.users.values()][0] as { id: string };
    for (const name of ["disable_user", "enable_user"]) {
      const reply = await action(`vm ${name}`, {
        requestId: `vm-${name}`,
        connectorId: "vm",
        action: name,
        args: { user_id: user.id },
      });
      expect(reply.status).toBe("succeeded");
    }
    const unsupported = await action("bl action", {
      requestId: "bl-1",
      connectorId: "bl-body",
      action: "disable_user",
      args: { user_id: "1" },
    });
    expect(unsupported).toMatchObject({ status: "failed", error: { code: "unsupported" } });
    await action("malformed", {
      requestId: "m-1",
      connectorId: "vm",
      action: "disable_user",
      args: { user_id: "../x" },
    });
    await operator("cloud action", ["action", "vm", "disable_user", "--user-id", user.id]);
    await operator("cloud sync", ["sync", "vm"]);
    await runQueues();
    await operator("cloud list", ["list"]);
  });

  it("upstreams and a platform that fail (401, 500) and echo what they were sent", async () => {
    up.echo.answer = (request) =>
      echoAnswer(request.target.includes("/scim/") ? "resource_401" : "token_401", 2)(request);
    await operator(
      "put-instance bl-echo",
      ["put-instance", "bl-echo", "blackline"],
      up.blacklineEnv(up.echo.url, "basic"),
    );
    await operator(
      "put-instance vm-echo",
      ["put-instance", "vm-echo", "valimail"],
      up.valimailEnv(up.echo.url),
    );
    // The platform itself rejects the token request and echoes it.
    await operator(
      "put-instance vm-platform-echo",
      ["put-instance", "vm-platform-echo", "valimail"],
      {
        ...up.valimailEnv(up.valimail.url),
        CONNECTOR_PLATFORM_URL: up.echo.url,
      },
    );
    await runQueues();
    const failed = await action("vm-echo action", {
      requestId: "e-1",
      connectorId: "vm-echo",
      action: "disable_user",
      args: { user_id: "u-1" },
    });
    expect(failed.status).toBe("failed");

    up.echo.answer = echoAnswer("resource_500", 0);
    await operator("cloud sync bl-echo", ["sync", "bl-echo"]);
    await operator("cloud sync vm-echo", ["sync", "vm-echo"]);
    await runQueues();
    await action("vm-echo action 500", {
      requestId: "e-2",
      connectorId: "vm-echo",
      action: "enable_user",
      args: { user_id: "u-1" },
    });
    await operator("cloud list after failures", ["list"]);
    expect(up.platform.labels.filter((l) => l.label === "error").length).toBeGreaterThanOrEqual(2);
  });

  it("no log line, output, reply, table row or upload holds any form of a secret or token", async () => {
    for (const line of stack.logs())
      up.outputs.push({ what: `log ${line.functionKey} ${line.stream}`, text: line.line });
    for (const upload of up.platform.uploads.values())
      up.outputs.push({ what: `upload ${upload.syncId}`, text: upload.text ?? "" });
    up.outputs.push({ what: "labels", text: JSON.stringify(up.platform.labels) });
    const dynamo = new DynamoDBClient(awsClientConfig(moto.endpoint));
    for (const table of [
      stack.outputs.InstancesTableName,
      stack.outputs.RunsTableName,
    ] as string[]) {
      const { Items } = await dynamo.send(new ScanCommand({ TableName: table }));
      up.outputs.push({ what: `table ${table}`, text: JSON.stringify(Items) });
    }
    dynamo.destroy();

    expect(up.leaks()).toEqual([]);
    // The outputs are real: debug lines were logged, and echoed secrets were redacted in them.
    expect(stack.logs().some((l) => l.line.includes('"level":"DEBUG"'))).toBe(true);
    expect(up.outputs.some((o) => o.text.includes("[REDACTED]"))).toBe(true);
    expect(up.echo.received.length).toBeGreaterThan(0);
  });
});
