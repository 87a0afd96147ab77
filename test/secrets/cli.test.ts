import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BlacklineSimulator, startBlacklineSimulator } from "../../lib/simulators/blackline";
import { startValimailSimulator, type ValimailSimulator } from "../../lib/simulators/valimail";
import { type CliRun, cli } from "../helpers/cli";
import { makeTempDir } from "../helpers/tempDir";
import { type RecordingServer, startRecordingServer } from "../property/recordingServer";
import { ECHO_ITEMS, ECHO_TOKEN, type EchoMode, echoAnswer } from "./echoUpstream";
import { BLACKLINE_CLIENT_ID, basicToken, leakChecker, SECRETS } from "./secretForms";

/**
 * The command line at its most verbose (`--verbose`): a sync and an action of each connector,
 * against the simulators and against an upstream that fails and echoes what it was sent. No form
 * of any secret (raw, trimmed, form- or URL-encoded, JSON, base64, HTTP Basic) and no issued token
 * appears on stdout, on stderr, in a reply or in a snapshot.
 */

let blackline: BlacklineSimulator;
let valimail: ValimailSimulator;
let echo: RecordingServer;
let dir: string;
const outputs: { what: string; text: string }[] = [];

function record(what: string, run: CliRun) {
  outputs.push(
    { what: `${what} stdout`, text: run.stdout },
    { what: `${what} stderr`, text: run.stderr },
  );
}

function blacklineEnv(baseUrl: string, clientAuth: "body" | "basic"): Record<string, string> {
  return {
    CONNECTOR_ACCOUNTING_CLIENT_ID: BLACKLINE_CLIENT_ID,
    CONNECTOR_ACCOUNTING_CLIENT_SECRET: SECRETS.blacklineClientSecret,
    // The API key comes from a file with trailing line breaks: sent trimmed.
    CONNECTOR_ACCOUNTING_API_KEY_FILE: join(dir, "api-key"),
    CONNECTOR_ACCOUNTING_USERNAME: "api.admin",
    CONNECTOR_ACCOUNTING_SCOPE: blackline.scope,
    CONNECTOR_ACCOUNTING_BASE_URL: baseUrl,
    CONNECTOR_ACCOUNTING_CLIENT_AUTH: clientAuth,
    CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0",
  };
}

function valimailEnv(baseUrl: string): Record<string, string> {
  return {
    CONNECTOR_EMAILAUTH_CLIENT_ID: SECRETS.valimailClientId,
    CONNECTOR_EMAILAUTH_APP_ID_FILE: join(dir, "app-id"),
    CONNECTOR_EMAILAUTH_SLUG: valimail.slug,
    CONNECTOR_EMAILAUTH_BASE_URL: baseUrl,
    CONNECTOR_EMAILAUTH_REQUESTS_PER_SECOND: "0",
    CONNECTOR_PROVISIONING: "true",
  };
}

beforeAll(async () => {
  dir = await makeTempDir("ac-secrets-cli-");
  await writeFile(join(dir, "api-key"), `${SECRETS.blacklineApiKey}\n\n`);
  await writeFile(join(dir, "app-id"), `${SECRETS.valimailAppId}\r\n`);
  blackline = await startBlacklineSimulator({
    size: { users: 30, teams: 4, roles: 3 },
    credentials: {
      clientId: BLACKLINE_CLIENT_ID,
      clientSecret: SECRETS.blacklineClientSecret,
      username: "api.admin",
      apiKey: SECRETS.blacklineApiKey,
    },
  });
  valimail = await startValimailSimulator({
    users: 12,
    credentials: { clientId: SECRETS.valimailClientId, appId: SECRETS.valimailAppId },
  });
  echo = await startRecordingServer();
});

afterAll(async () => {
  await Promise.all([blackline.close(), valimail.close(), echo.close()]);
});

describe("no secret reaches the command line's output (--verbose)", () => {
  it("syncs and actions of each connector against the simulators", async () => {
    for (const clientAuth of ["body", "basic"] as const) {
      const out = join(dir, `blackline-${clientAuth}.sync.jsonl`);
      const sync = await cli(
        ["sync", "blackline", "--verbose", "--out", out],
        blacklineEnv(blackline.url, clientAuth),
      );
      expect(sync.code, sync.stderr).toBe(0);
      record(`sync blackline (${clientAuth})`, sync);
      outputs.push({
        what: `blackline snapshot (${clientAuth})`,
        text: await readFile(out, "utf8"),
      });
      const json = await cli(
        ["sync", "blackline", "--verbose", "--json", "--out", `${out}.gz`],
        blacklineEnv(blackline.url, clientAuth),
      );
      record(`sync blackline --json (${clientAuth})`, json);
    }
    record(
      "validate blackline",
      await cli(["validate", "blackline", "--verbose"], blacklineEnv(blackline.url, "body")),
    );
    const blacklineAction = await cli(
      ["action", "blackline", "disable_user", "--verbose", "--user-id", "1"],
      blacklineEnv(blackline.url, "body"),
    );
    expect(JSON.parse(blacklineAction.stdout).error.code).toBe("unsupported");
    record("action blackline", blacklineAction);

    const out = join(dir, "valimail.sync.jsonl");
    const sync = await cli(
      ["sync", "valimail", "--verbose", "--out", out],
      valimailEnv(valimail.url),
    );
    expect(sync.code, sync.stderr).toBe(0);
    record("sync valimail", sync);
    outputs.push({ what: "valimail snapshot", text: await readFile(out, "utf8") });
    const user = [...valimail.users.values()][0];
    for (const action of ["disable_user", "enable_user"]) {
      const run = await cli(
        ["action", "valimail", action, "--verbose", "--user-id", user?.id ?? ""],
        valimailEnv(valimail.url),
      );
      expect(JSON.parse(run.stdout).status).toBe("succeeded");
      record(`action valimail ${action}`, run);
    }
    const create = await cli(
      [
        "create-account",
        "valimail",
        "--verbose",
        "--email",
        "grace@example.com",
        "--given-name",
        "Grace",
        "--family-name",
        "Hopper",
      ],
      valimailEnv(valimail.url),
    );
    record("create-account valimail", create);
    record(
      "validate valimail",
      await cli(["validate", "valimail", "--verbose"], valimailEnv(valimail.url)),
    );
  });

  it("an upstream that fails (401, 500) and echoes the request back: every error path", async () => {
    const modes: EchoMode[] = ["token_401", "token_500", "resource_401", "resource_500"];
    for (const mode of modes) {
      for (let item = 0; item < ECHO_ITEMS; item++) {
        echo.answer = echoAnswer(mode, item);
        for (const clientAuth of ["body", "basic"] as const) {
          const env = blacklineEnv(echo.url, clientAuth);
          const sync = await cli(
            ["sync", "blackline", "--verbose", "--out", join(dir, "echo-bl.jsonl")],
            env,
          );
          expect(sync.code, `${mode} ${clientAuth}`).not.toBe(0);
          record(`sync blackline ${mode} ${item} ${clientAuth}`, sync);
          record(
            `validate blackline ${mode} ${item} ${clientAuth}`,
            await cli(["validate", "blackline", "--verbose"], env),
          );
        }
        const env = valimailEnv(echo.url);
        const sync = await cli(
          ["sync", "valimail", "--verbose", "--out", join(dir, "echo-vm.jsonl")],
          env,
        );
        expect(sync.code, mode).not.toBe(0);
        record(`sync valimail ${mode} ${item}`, sync);
        const action = await cli(
          ["action", "valimail", "disable_user", "--verbose", "--user-id", "u-1"],
          env,
        );
        expect(JSON.parse(action.stdout).status).toBe("failed");
        record(`action valimail ${mode} ${item}`, action);
      }
    }
    // The echo really carried the secrets: the check below would see them if redaction failed.
    expect(
      echo.received.some((r) =>
        r.body.includes(encodeURIComponent(SECRETS.blacklineApiKey).replace(/%20/g, "+")),
      ),
    ).toBe(true);
    expect(outputs.some((o) => o.text.includes("[REDACTED]"))).toBe(true);
  });

  it("no output holds any form of a secret or token", () => {
    const leaks = leakChecker(
      [
        ...Object.values(SECRETS),
        ...blackline.issuedTokens(),
        ...valimail.issuedTokens(),
        ECHO_TOKEN,
      ],
      [basicToken(BLACKLINE_CLIENT_ID, SECRETS.blacklineClientSecret)],
    );
    const found = outputs.flatMap(({ what, text }) =>
      leaks(text).map((leak) => `${what}: ${leak}`),
    );
    expect(found).toEqual([]);
    expect(outputs.length).toBeGreaterThan(40);
  });
});
