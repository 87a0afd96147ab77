// No secret in the cloud runtime's output, on moto_server: instances registered with distinctive
// secrets, every function at POWERTOOLS_LOG_LEVEL=DEBUG, a sync of each connector through the real
// queues, the action function for each connector, and upstreams and a platform that fail and echo
// what they were sent. The functions' logs, the operator commands' output, the replies, the runs
// and registry tables, and everything the platform received hold no form of any secret or token.
// (The instance's Secrets Manager secret holds them by design and is not read here.)

import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DynamoDBClient, ScanCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ActionReply } from "../../lib/actions";
import { type BlacklineSimulator, startBlacklineSimulator } from "../../lib/simulators/blackline";
import { type PlatformSimulator, startPlatformSimulator } from "../../lib/simulators/platform";
import { startValimailSimulator, type ValimailSimulator } from "../../lib/simulators/valimail";
import { type CliRun, cli } from "../helpers/cli";
import { makeTempDir } from "../helpers/tempDir";
import { type RecordingServer, startRecordingServer } from "../property/recordingServer";
import { ECHO_TOKEN, echoAnswer } from "../secrets/echoUpstream";
import { BLACKLINE_CLIENT_ID, basicToken, leakChecker, SECRETS } from "../secrets/secretForms";
import { awsClientConfig, awsEnv, deployStack, type Moto, type Stack, startMoto } from "./harness";

let moto: Moto;
let stack: Stack;
let blackline: BlacklineSimulator;
let valimail: ValimailSimulator;
let platform: PlatformSimulator;
let echo: RecordingServer;
let dir: string;
const outputs: { what: string; text: string }[] = [];

beforeAll(async () => {
  moto = await startMoto();
  stack = await deployStack(moto, { stage: "dev" });
  Object.assign(process.env, awsEnv(moto.endpoint));
  for (const key of Object.keys(stack.functions)) {
    await stack.updateEnvironment(key, { POWERTOOLS_LOG_LEVEL: "DEBUG" });
  }
  dir = await makeTempDir("ac-secrets-aws-");
  await writeFile(join(dir, "api-key"), `${SECRETS.blacklineApiKey}\n\n`);
  blackline = await startBlacklineSimulator({
    size: { users: 40, teams: 5, roles: 3 },
    credentials: {
      clientId: BLACKLINE_CLIENT_ID,
      clientSecret: SECRETS.blacklineClientSecret,
      username: "api.admin",
      apiKey: SECRETS.blacklineApiKey,
    },
    // Some answers fail at first, so the retries' debug lines are written too.
    faults: { serverErrors: { every: 7, burst: 1 }, perRequest: true },
  });
  valimail = await startValimailSimulator({
    users: 12,
    credentials: { clientId: SECRETS.valimailClientId, appId: SECRETS.valimailAppId },
  });
  platform = await startPlatformSimulator({ clientSecret: SECRETS.platformSecret });
  echo = await startRecordingServer();
});

afterAll(async () => {
  await Promise.all([blackline?.close(), valimail?.close(), platform?.close(), echo?.close()]);
  await stack?.close();
  await moto?.stop();
});

const invoke = (functionName: string, event: unknown) => {
  const key = Object.entries(stack.functions).find(([, f]) => f.name === functionName)?.[0];
  if (!key) throw new Error(`no function named ${functionName} in the stack`);
  return stack.invoke(key, event);
};

async function operator(
  what: string,
  argv: string[],
  env: Record<string, string> = {},
): Promise<CliRun> {
  const run = await cli(["cloud", ...argv, "--stage", "dev", "--verbose"], env, { invoke });
  outputs.push(
    { what: `${what} stdout`, text: run.stdout },
    { what: `${what} stderr`, text: run.stderr },
  );
  return run;
}

function platformEnv(url = platform.url): Record<string, string> {
  return {
    CONNECTOR_PLATFORM_URL: url,
    CONNECTOR_CLIENT_ID: platform.credentials.clientId,
    CONNECTOR_CLIENT_SECRET: SECRETS.platformSecret,
  };
}

function blacklineEnv(baseUrl: string, clientAuth: "body" | "basic"): Record<string, string> {
  return {
    CONNECTOR_ACCOUNTING_CLIENT_ID: BLACKLINE_CLIENT_ID,
    CONNECTOR_ACCOUNTING_CLIENT_SECRET: SECRETS.blacklineClientSecret,
    CONNECTOR_ACCOUNTING_API_KEY_FILE: join(dir, "api-key"),
    CONNECTOR_ACCOUNTING_USERNAME: "api.admin",
    CONNECTOR_ACCOUNTING_SCOPE: blackline.scope,
    CONNECTOR_ACCOUNTING_BASE_URL: baseUrl,
    CONNECTOR_ACCOUNTING_CLIENT_AUTH: clientAuth,
    CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0",
    ...platformEnv(),
  };
}

function valimailEnv(baseUrl: string): Record<string, string> {
  return {
    CONNECTOR_EMAILAUTH_CLIENT_ID: SECRETS.valimailClientId,
    CONNECTOR_EMAILAUTH_APP_ID: SECRETS.valimailAppId,
    CONNECTOR_EMAILAUTH_SLUG: valimail.slug,
    CONNECTOR_EMAILAUTH_BASE_URL: baseUrl,
    CONNECTOR_EMAILAUTH_REQUESTS_PER_SECOND: "0",
    CONNECTOR_PROVISIONING: "true",
    ...platformEnv(),
  };
}

async function runQueues() {
  await stack.drainQueue("syncWorker");
  await stack.drainQueue("finalize");
}

async function action(what: string, request: unknown): Promise<ActionReply> {
  const reply = (await invoke(stack.outputs.ActionFunctionName as string, request)) as ActionReply;
  outputs.push({ what: `${what} reply`, text: JSON.stringify(reply) });
  return reply;
}

describe("no secret reaches the cloud runtime's output (POWERTOOLS_LOG_LEVEL=DEBUG)", () => {
  it("syncs of each connector and their actions", async () => {
    for (const clientAuth of ["body", "basic"] as const) {
      const put = await operator(
        `put-instance bl-${clientAuth}`,
        ["put-instance", `bl-${clientAuth}`, "blackline"],
        blacklineEnv(blackline.url, clientAuth),
      );
      expect(put.code, put.stderr).toBe(0);
    }
    const put = await operator(
      "put-instance vm",
      ["put-instance", "vm", "valimail"],
      valimailEnv(valimail.url),
    );
    expect(put.code, put.stderr).toBe(0);
    await runQueues();
    expect(platform.uploads.size).toBe(3);

    const user = [...valimail.users.values()][0] as { id: string };
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
    echo.answer = (request) =>
      echoAnswer(request.target.includes("/scim/") ? "resource_401" : "token_401", 2)(request);
    await operator(
      "put-instance bl-echo",
      ["put-instance", "bl-echo", "blackline"],
      blacklineEnv(echo.url, "basic"),
    );
    await operator(
      "put-instance vm-echo",
      ["put-instance", "vm-echo", "valimail"],
      valimailEnv(echo.url),
    );
    // The platform itself rejects the token request and echoes it.
    await operator(
      "put-instance vm-platform-echo",
      ["put-instance", "vm-platform-echo", "valimail"],
      {
        ...valimailEnv(valimail.url),
        CONNECTOR_PLATFORM_URL: echo.url,
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

    echo.answer = echoAnswer("resource_500", 0);
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
    expect(platform.labels.filter((l) => l.label === "error").length).toBeGreaterThanOrEqual(2);
  });

  it("no log line, output, reply, table row or upload holds any form of a secret or token", async () => {
    for (const line of stack.logs())
      outputs.push({ what: `log ${line.functionKey} ${line.stream}`, text: line.line });
    for (const upload of platform.uploads.values())
      outputs.push({ what: `upload ${upload.syncId}`, text: upload.text ?? "" });
    outputs.push({ what: "labels", text: JSON.stringify(platform.labels) });
    const dynamo = new DynamoDBClient(awsClientConfig(moto.endpoint));
    for (const table of [
      stack.outputs.InstancesTableName,
      stack.outputs.RunsTableName,
    ] as string[]) {
      const { Items } = await dynamo.send(new ScanCommand({ TableName: table }));
      outputs.push({ what: `table ${table}`, text: JSON.stringify(Items) });
    }
    dynamo.destroy();

    const leaks = leakChecker(
      [
        ...Object.values(SECRETS),
        ...blackline.issuedTokens(),
        ...valimail.issuedTokens(),
        ...platform.issuedTokens(),
        ECHO_TOKEN,
      ],
      [basicToken(BLACKLINE_CLIENT_ID, SECRETS.blacklineClientSecret)],
    );
    const found = outputs.flatMap(({ what, text }) =>
      leaks(text).map((leak) => `${what}: ${leak}`),
    );
    expect(found).toEqual([]);
    // The outputs are real: debug lines were logged, and echoed secrets were redacted in them.
    expect(stack.logs().some((l) => l.line.includes('"level":"DEBUG"'))).toBe(true);
    expect(outputs.some((o) => o.text.includes("[REDACTED]"))).toBe(true);
    expect(echo.received.length).toBeGreaterThan(0);
  });
});
