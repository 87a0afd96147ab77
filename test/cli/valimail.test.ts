import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startValimailSimulator, type ValimailSimulator } from "../../lib/simulators/valimail";
import { cli } from "../helpers/cli";
import { makeTempDir } from "../helpers/tempDir";
import { valimailEnv } from "../helpers/valimail";

let sim: ValimailSimulator;
let env: Record<string, string>;
beforeAll(async () => {
  sim = await startValimailSimulator({ seed: 9, users: 120 });
  env = valimailEnv(sim);
});
afterAll(() => sim.close());

describe("Valimail configuration mistakes exit 2 and name the variable", () => {
  const cases: Array<[string, Record<string, string | undefined>, string, RegExp]> = [
    [
      "a missing client id",
      { CONNECTOR_EMAILAUTH_CLIENT_ID: undefined },
      "CONNECTOR_EMAILAUTH_CLIENT_ID",
      /is not set; .*Configuration Only/,
    ],
    [
      "a missing app id",
      { CONNECTOR_EMAILAUTH_APP_ID: "" },
      "CONNECTOR_EMAILAUTH_APP_ID",
      /is not set/,
    ],
    [
      "a missing slug",
      { CONNECTOR_EMAILAUTH_SLUG: undefined },
      "CONNECTOR_EMAILAUTH_SLUG",
      /is not set; .*after \/app\//,
    ],
    [
      "the application's address as slug",
      { CONNECTOR_EMAILAUTH_SLUG: "https://app.valimail.com/app/acme/dashboard" },
      "CONNECTOR_EMAILAUTH_SLUG",
      /is an address; set only the account slug, the segment after \/app\/ \(here "acme"\)/,
    ],
    [
      "another address as slug",
      { CONNECTOR_EMAILAUTH_SLUG: "acme.valimail.com" },
      "CONNECTOR_EMAILAUTH_SLUG",
      /looks like an address/,
    ],
    [
      "a plain-http base address",
      { CONNECTOR_EMAILAUTH_BASE_URL: "http://api.valimail.com" },
      "CONNECTOR_EMAILAUTH_BASE_URL",
      /must start with https:\/\//,
    ],
    [
      "a page size out of range",
      { CONNECTOR_EMAILAUTH_PAGE_SIZE: "5000" },
      "CONNECTOR_EMAILAUTH_PAGE_SIZE",
      /must be at most 1000/,
    ],
  ];
  for (const [what, change, variable, message] of cases) {
    it(what, async () => {
      const before = sim.stats.requests;
      for (const argv of [
        ["validate", "valimail"],
        ["action", "valimail", "disable_user", "--user-id", "abc"],
      ]) {
        const run = await cli(argv, { ...env, CONNECTOR_PROVISIONING: "true", ...change });
        expect(run.code).toBe(2);
        expect(run.stderr).toContain(variable);
        expect(run.stderr).toMatch(message);
      }
      expect(sim.stats.requests).toBe(before);
    });
  }
});

describe("Valimail credentials", () => {
  it("validate makes one token call and one small read", async () => {
    const before = { ...sim.stats.byRoute };
    const run = await cli(["validate", "valimail"], env);

    expect(run.code).toBe(0);
    expect(run.stdout).toContain("SCIM users readable (120 users)");
    expect(sim.stats.byRoute.auth).toBe((before.auth ?? 0) + 1);
    expect(sim.stats.byRoute.list).toBe((before.list ?? 0) + 1);
  });

  it("a rejected key and a slug the key cannot access exit 3, for validate and for actions", async () => {
    const wrongKey = await cli(["validate", "valimail"], {
      ...env,
      CONNECTOR_EMAILAUTH_APP_ID: "00000000-0000-0000-0000-000000000000",
    });
    const wrongSlug = await cli(["validate", "valimail"], {
      ...env,
      CONNECTOR_EMAILAUTH_SLUG: "other-account",
    });
    const action = await cli(["action", "valimail", "enable_user", "--user-id", "abc"], {
      ...env,
      CONNECTOR_PROVISIONING: "true",
      CONNECTOR_EMAILAUTH_CLIENT_ID: "wrong-client-id",
    });

    expect(wrongKey.code).toBe(3);
    expect(wrongKey.stderr).toMatch(
      /Valimail rejected the API key \(\/auth answered 400: invalid client-id or app-id\)/,
    );
    expect(wrongSlug.code).toBe(3);
    expect(wrongSlug.stderr).toMatch(
      /answered 403: Not authorized to access this account.*CONNECTOR_EMAILAUTH_SLUG \("other-account"\)/,
    );
    expect(action.code).toBe(3);
    expect(JSON.parse(action.stdout).error.code).toBe("auth_failed");
  });
});

describe("the command line for Valimail and for writes", () => {
  it("sync valimail writes a snapshot and the summary", async () => {
    const out = join(await makeTempDir(), "v.jsonl");
    const run = await cli(["sync", "valimail", "--out", out, "--json"], env);

    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      connector: "valimail",
      counts: { resource: 123, grant: 120 },
    });
  });

  it("BlackLine answers every write with unsupported, exit 1, with no configuration needed", async () => {
    const runs = [
      await cli(
        ["action", "blackline", "enable_user", "--user-id", "1042", "--request-id", "q"],
        {},
      ),
      await cli(
        [
          "create-account",
          "blackline",
          "--email",
          "a@example.com",
          "--given-name",
          "A",
          "--family-name",
          "B",
        ],
        {},
      ),
      await cli(["grant", "blackline", "--user-id", "1042", "--entitlement", "team:7:member"], {}),
      await cli(
        ["revoke", "blackline", "--user-id", "1042", "--entitlement", "role:3:assigned"],
        {},
      ),
    ];
    for (const run of runs) {
      expect(run.code).toBe(1);
      expect(JSON.parse(run.stdout).error).toEqual({
        code: "unsupported",
        message: expect.stringMatching(/read-only/),
        retryable: false,
      });
    }
    expect(JSON.parse(runs[0]?.stdout ?? "").requestId).toBe("q");
  });

  it("an action name the command does not take is bad usage", async () => {
    const run = await cli(["action", "valimail", "delete_user", "--user-id", "abc"], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/'delete_user' is invalid.*enable_user, disable_user/);
  });

  it("never prints the key or a token", async () => {
    const dir = await makeTempDir();
    const user = [...sim.users.values()][0];
    const outputs: string[] = [];
    for (const argv of [
      ["sync", "valimail", "--verbose", "--out", join(dir, "s.jsonl")],
      ["validate", "valimail", "--verbose"],
      ["action", "valimail", "disable_user", "--verbose", "--user-id", user?.id ?? ""],
      [
        "create-account",
        "valimail",
        "--verbose",
        "--email",
        "s@example.com",
        "--given-name",
        "S",
        "--family-name",
        "T",
      ],
    ]) {
      const run = await cli(argv, { ...env, CONNECTOR_PROVISIONING: "true" });
      outputs.push(run.stdout, run.stderr);
    }
    const badKey = await cli(["validate", "valimail"], {
      ...env,
      CONNECTOR_EMAILAUTH_APP_ID: "bad-app-id-secret-77",
    });
    outputs.push(badKey.stdout, badKey.stderr, await readFile(join(dir, "s.jsonl"), "utf8"));

    const secrets = [
      sim.credentials.clientId,
      sim.credentials.appId,
      "bad-app-id-secret-77",
      ...sim.issuedTokens(),
    ];
    expect(secrets.length).toBeGreaterThan(4);
    for (const output of outputs)
      for (const secret of secrets) expect(output).not.toContain(secret);
  });
});
