import { readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BlacklineSimulator, startBlacklineSimulator } from "../../lib/simulators/blackline";
import { cli } from "../helpers/cli";
import { makeTempDir } from "../helpers/tempDir";

let sim: BlacklineSimulator;
let env: Record<string, string>;
beforeAll(async () => {
  sim = await startBlacklineSimulator({ seed: 5, size: { users: 300, teams: 20, roles: 6 } });
  env = { ...sim.env(), CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0" };
});
afterAll(() => sim.close());

const GUID = "3f2504e0-4f89-11d3-9a0c-0305e82c3301";

describe("configuration mistakes exit 2 and name the variable", () => {
  const cases: Array<[string, Record<string, string | undefined>, string, RegExp]> = [
    [
      "a missing client id",
      { CONNECTOR_ACCOUNTING_CLIENT_ID: undefined },
      "CONNECTOR_ACCOUNTING_CLIENT_ID",
      /is not set; set it to the Client ID/,
    ],
    [
      "a missing secret",
      { CONNECTOR_ACCOUNTING_CLIENT_SECRET: "" },
      "CONNECTOR_ACCOUNTING_CLIENT_SECRET",
      /is not set/,
    ],
    [
      "a missing username",
      { CONNECTOR_ACCOUNTING_USERNAME: undefined },
      "CONNECTOR_ACCOUNTING_USERNAME",
      /is not set/,
    ],
    [
      "a missing API key",
      { CONNECTOR_ACCOUNTING_API_KEY: undefined },
      "CONNECTOR_ACCOUNTING_API_KEY",
      /is not set/,
    ],
    [
      "a missing scope",
      { CONNECTOR_ACCOUNTING_SCOPE: undefined },
      "CONNECTOR_ACCOUNTING_SCOPE",
      /is not set; .*instance_<GUID>/,
    ],
    [
      "neither environment nor base address",
      { CONNECTOR_ACCOUNTING_BASE_URL: undefined },
      "CONNECTOR_ACCOUNTING_ENVIRONMENT",
      /is not set; set it to your environment subdomain/,
    ],
    [
      "a company name as environment",
      { CONNECTOR_ACCOUNTING_BASE_URL: undefined, CONNECTOR_ACCOUNTING_ENVIRONMENT: "Acme Corp" },
      "CONNECTOR_ACCOUNTING_ENVIRONMENT",
      /not a single DNS label.*not the company or instance name/,
    ],
    [
      "a pasted BlackLine address as environment",
      { CONNECTOR_ACCOUNTING_ENVIRONMENT: "https://us2.api.blackline.com/" },
      "CONNECTOR_ACCOUNTING_ENVIRONMENT",
      /set only its first label, "us2"/,
    ],
    [
      "another address as environment",
      { CONNECTOR_ACCOUNTING_ENVIRONMENT: "acme.blackline.com" },
      "CONNECTOR_ACCOUNTING_ENVIRONMENT",
      /looks like an address/,
    ],
    [
      "two instance tokens",
      { CONNECTOR_ACCOUNTING_SCOPE: `DataIngestionAPI instance_${GUID} instance_${GUID}` },
      "CONNECTOR_ACCOUNTING_SCOPE",
      /has 2 instance_ tokens.*keep exactly one/,
    ],
    [
      "an instance token without a GUID",
      { CONNECTOR_ACCOUNTING_SCOPE: "DataIngestionAPI instance_acme" },
      "CONNECTOR_ACCOUNTING_SCOPE",
      /"instance_acme" does not end in a GUID/,
    ],
    [
      "a plain-http base address",
      { CONNECTOR_ACCOUNTING_BASE_URL: "http://us.api.blackline.com" },
      "CONNECTOR_ACCOUNTING_BASE_URL",
      /must start with https:\/\//,
    ],
    [
      "a page size that is not a number",
      { CONNECTOR_ACCOUNTING_PAGE_SIZE: "lots" },
      "CONNECTOR_ACCOUNTING_PAGE_SIZE",
      /must be a whole number from 1 to 10000/,
    ],
    [
      "a concurrency of zero",
      { CONNECTOR_ACCOUNTING_MAX_CONCURRENCY: "0" },
      "CONNECTOR_ACCOUNTING_MAX_CONCURRENCY",
      /must be at least 1/,
    ],
    [
      "both a secret and its _FILE",
      { CONNECTOR_ACCOUNTING_API_KEY_FILE: "/etc/hostname" },
      "CONNECTOR_ACCOUNTING_API_KEY",
      /both CONNECTOR_ACCOUNTING_API_KEY and CONNECTOR_ACCOUNTING_API_KEY_FILE are set/,
    ],
    [
      "an unreadable _FILE",
      {
        CONNECTOR_ACCOUNTING_API_KEY: undefined,
        CONNECTOR_ACCOUNTING_API_KEY_FILE: "/nonexistent/key",
      },
      "CONNECTOR_ACCOUNTING_API_KEY_FILE",
      /cannot read \/nonexistent\/key \(ENOENT\)/,
    ],
  ];

  for (const [what, change, variable, message] of cases) {
    it(`${what}: sync and validate`, async () => {
      for (const command of ["sync", "validate"]) {
        const before = sim.stats.requests;
        const run = await cli(
          [command, "blackline", "--out", join(await makeTempDir(), "s.jsonl")].slice(
            0,
            command === "sync" ? 4 : 2,
          ),
          { ...env, ...change },
        );
        expect(run.code).toBe(2);
        expect(run.stderr).toContain(variable);
        expect(run.stderr).toMatch(message);
        expect(sim.stats.requests).toBe(before);
      }
    });
  }

  it("reports every mistake at once", async () => {
    const run = await cli(["validate", "blackline"], {
      CONNECTOR_ACCOUNTING_SCOPE: `x instance_${GUID}`,
    });
    expect(run.code).toBe(2);
    for (const variable of ["CLIENT_ID", "CLIENT_SECRET", "USERNAME", "API_KEY", "ENVIRONMENT"]) {
      expect(run.stderr).toContain(`CONNECTOR_ACCOUNTING_${variable}: is not set`);
    }
  });

  it("rejects an --out in a missing directory and an unreadable --env-file before any request", async () => {
    const before = sim.stats.requests;
    const out = await cli(["sync", "blackline", "--out", "/nonexistent/dir/s.jsonl"], env);
    const envFile = await cli(
      ["validate", "blackline", "--env-file", "/nonexistent/blackline.env"],
      env,
    );

    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/--out: the directory \/nonexistent\/dir does not exist/);
    expect(envFile.code).toBe(2);
    expect(envFile.stderr).toMatch(
      /--env-file: cannot read \/nonexistent\/blackline.env \(ENOENT\)/,
    );
    expect(sim.stats.requests).toBe(before);
  });

  it("replaces only a regular file at --out: a directory, a device or a symlink is refused first", async () => {
    const dir = await makeTempDir();
    await symlink("/etc/hostname", join(dir, "link.jsonl"));
    const before = sim.stats.requests;

    const runs = await Promise.all(
      [dir, "/dev/null", join(dir, "link.jsonl")].map((out) =>
        cli(["sync", "blackline", "--out", out], env),
      ),
    );

    expect(runs.map((r) => r.code)).toEqual([2, 2, 2]);
    expect(runs[0]?.stderr).toMatch(/--out: .* is a directory; name a regular file/);
    expect(runs[1]?.stderr).toMatch(/--out: \/dev\/null is not a regular file/);
    expect(runs[2]?.stderr).toMatch(/--out: .*link\.jsonl is a symbolic link/);
    expect(sim.stats.requests).toBe(before);
  });

  it("rejects an unknown connector and a missing argument as usage errors", async () => {
    expect((await cli(["sync", "salesforce"], env)).code).toBe(2);
    expect((await cli(["sync"], env)).code).toBe(2);
    expect((await cli(["frobnicate"], env)).code).toBe(2);
  });
});

describe("rejected credentials exit 3", () => {
  it("a scope without an instance token, caught before any request, quotes invalid_grant", async () => {
    const before = sim.stats.requests;
    for (const command of [
      ["validate", "blackline"],
      ["sync", "blackline", "--out", join(await makeTempDir(), "s.jsonl")],
    ]) {
      const run = await cli(command, {
        ...env,
        CONNECTOR_ACCOUNTING_SCOPE: "DataIngestionAPI ReportsAPI",
      });
      expect(run.code).toBe(3);
      expect(run.stderr).toMatch(/invalid_grant: Invalid instance GUID/);
      expect(run.stderr).toMatch(/exactly one instance_<GUID>/);
    }
    expect(sim.stats.requests).toBe(before);
  });

  it("an instance token the upstream does not know: the upstream's invalid_grant, quoted", async () => {
    for (const command of [
      ["validate", "blackline"],
      ["sync", "blackline", "--out", join(await makeTempDir(), "s.jsonl")],
    ]) {
      const run = await cli(command, {
        ...env,
        CONNECTOR_ACCOUNTING_SCOPE: `DataIngestionAPI instance_${GUID}`,
      });
      expect(run.code).toBe(3);
      expect(run.stderr).toContain(
        "BlackLine rejected the token request (invalid_grant: Invalid instance GUID)",
      );
      expect(run.stderr).toContain("CONNECTOR_ACCOUNTING_SCOPE");
    }
  });

  it("a wrong API key, a wrong client secret, and a user without the administrator role", async () => {
    const wrongKey = await cli(["validate", "blackline"], {
      ...env,
      CONNECTOR_ACCOUNTING_API_KEY: "wrong-key-1234",
    });
    const wrongClient = await cli(["validate", "blackline"], {
      ...env,
      CONNECTOR_ACCOUNTING_CLIENT_SECRET: "wrong-secret-1234",
    });
    const viewer = await cli(["validate", "blackline"], {
      ...env,
      CONNECTOR_ACCOUNTING_USERNAME: sim.credentials.viewerUsername,
      CONNECTOR_ACCOUNTING_API_KEY: sim.credentials.viewerApiKey,
    });

    expect(wrongKey.code).toBe(3);
    expect(wrongKey.stderr).toMatch(
      /invalid_grant.*Check CONNECTOR_ACCOUNTING_USERNAME and CONNECTOR_ACCOUNTING_API_KEY/,
    );
    expect(wrongClient.code).toBe(3);
    expect(wrongClient.stderr).toMatch(
      /invalid_client.*Check CONNECTOR_ACCOUNTING_CLIENT_ID and CONNECTOR_ACCOUNTING_CLIENT_SECRET/,
    );
    expect(viewer.code).toBe(3);
    expect(viewer.stderr).toMatch(/answered 403.*administrator role/);
  });
});

describe("sync and validate", () => {
  it("validate makes one token call and one small read", async () => {
    const before = { ...sim.stats.byRoute };
    const run = await cli(["validate", "blackline"], env);

    expect(run.code).toBe(0);
    expect(run.stdout).toContain("blackline: configuration is valid");
    expect(run.stdout).toContain("users readable (300 users)");
    expect(sim.stats.byRoute.token).toBe((before.token ?? 0) + 1);
    expect(sim.stats.byRoute.users).toBe((before.users ?? 0) + 1);
  });

  it("sync prints the summary on stdout, progress on stderr, and --json one object", async () => {
    const dir = await makeTempDir();
    const text = await cli(["sync", "blackline", "--out", join(dir, "a.jsonl")], env);
    const json = await cli(["sync", "blackline", "--out", join(dir, "b.jsonl.gz"), "--json"], env);

    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/blackline sync complete/);
    expect(text.stdout).toMatch(
      /records {5}3 resource types, 326 resources, 26 entitlements, \d+ grants/,
    );
    expect(text.stdout).toMatch(/requests {4}\d+ \(0 retries, 0 rate-limit waits/);
    expect(text.stdout).toContain(join(dir, "a.jsonl"));
    expect(text.stderr).toMatch(/blackline sync: \d+ jobs done/);
    expect(json.code).toBe(0);
    const summary = JSON.parse(json.stdout);
    expect(summary).toMatchObject({
      connector: "blackline",
      status: "complete",
      snapshot: join(dir, "b.jsonl.gz"),
    });
    expect(summary.counts.resource).toBe(326);
    expect(Object.keys(summary)).toEqual(
      expect.arrayContaining(["requests", "retries", "rateLimitWaits", "durationMs"]),
    );
  });

  it("a sync that fails exits 1, says why, and leaves no snapshot", async () => {
    const broken = await startBlacklineSimulator({
      size: { users: 300, teams: 5, roles: 2 },
      ignorePaging: true,
      maxPageSize: 100,
    });
    const dir = await makeTempDir();
    try {
      const run = await cli(
        ["sync", "blackline", "--out", join(dir, "s.jsonl"), "--env-file", "/dev/null"],
        {
          ...broken.env(),
          CONNECTOR_ACCOUNTING_PAGE_SIZE: "100",
        },
      );
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/error: .*ignores the page parameter/);
      await expect(readFile(join(dir, "s.jsonl"))).rejects.toThrow(/ENOENT/);
    } finally {
      await broken.close();
    }
  });

  it("reads an env file, with the environment winning, and secrets from _FILE", async () => {
    const dir = await makeTempDir();
    const keyFile = join(dir, "api-key");
    await writeFile(keyFile, `${sim.credentials.apiKey}\n`);
    const envFile = join(dir, "blackline.env");
    const {
      CONNECTOR_ACCOUNTING_API_KEY: _key,
      CONNECTOR_ACCOUNTING_USERNAME: _user,
      ...rest
    } = env;
    await writeFile(
      envFile,
      `${Object.entries(rest)
        .map(([k, v]) => `${k}="${v}"`)
        .join(
          "\n",
        )}\nCONNECTOR_ACCOUNTING_USERNAME=someone.else\nCONNECTOR_ACCOUNTING_API_KEY_FILE=${keyFile}\n`,
    );

    const run = await cli(["validate", "blackline", "--env-file", envFile], {
      CONNECTOR_ACCOUNTING_USERNAME: sim.credentials.username,
    });

    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
  });
});

describe("secrets", () => {
  it("never reach stdout, stderr, log lines or the snapshot", async () => {
    // Prepare: a sync with faults and --verbose (retry log lines), and failures that echo input.
    const dir = await makeTempDir();
    const faulty = await startBlacklineSimulator({
      size: { users: 200, teams: 10, roles: 4 },
      tokenMaxUses: 30,
      faults: { serverErrors: { every: 9, burst: 2 }, rateLimit: { every: 11 }, perRequest: true },
    });
    const outputs: string[] = [];
    try {
      const runs = [
        await cli(["sync", "blackline", "--verbose", "--out", join(dir, "s.jsonl")], {
          ...faulty.env(),
          CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0",
        }),
        await cli(["validate", "blackline", "--verbose"], {
          ...env,
          CONNECTOR_ACCOUNTING_CLIENT_SECRET: "wrong-client-secret-99",
        }),
        await cli(["validate", "blackline", "--verbose"], {
          ...env,
          CONNECTOR_ACCOUNTING_SCOPE: "no-instance",
        }),
        await cli(["sync", "blackline", "--json", "--out", join(dir, "t.jsonl")], env),
      ];
      expect(runs.map((r) => r.code)).toEqual([0, 3, 3, 0]);
      expect(runs[0]?.stderr).toMatch(/debug: (retrying|rate limited|token rejected)/);
      for (const run of runs) outputs.push(run.stdout, run.stderr);
      outputs.push(
        await readFile(join(dir, "s.jsonl"), "utf8"),
        await readFile(join(dir, "t.jsonl"), "utf8"),
      );

      // Assess: search for the actual values.
      const secrets = [
        sim.credentials.clientSecret,
        sim.credentials.apiKey,
        "wrong-client-secret-99",
        ...sim.issuedTokens(),
        ...faulty.issuedTokens(),
      ];
      expect(secrets.length).toBeGreaterThan(5);
      for (const output of outputs) {
        for (const secret of secrets) expect(output).not.toContain(secret);
      }
    } finally {
      await faulty.close();
    }
  });
});
