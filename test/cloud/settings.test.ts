// The settings function's pure parts (docs/settings.md): a request's settings checked as a
// save stores them, field errors split into message and fix, and the request's shape. What
// touches AWS runs in the AWS tier (test/aws/settings.ts).
import { describe, expect, it } from "vitest";
import { fieldError, settingsRequest } from "../../lib/cloud/settings";
import { settingsToStore } from "../../lib/cloud/settings/settingsToStore";
import { ConfigError, CredentialsRejectedError } from "../../lib/errors";

const PLATFORM = {
  CONNECTOR_PLATFORM_URL: "https://platform.example.com",
  CONNECTOR_CLIENT_ID: "platform-client",
  CONNECTOR_CLIENT_SECRET: "platform-secret-unit-1",
};

const BLACKLINE = {
  CONNECTOR_ACCOUNTING_CLIENT_ID: "client",
  CONNECTOR_ACCOUNTING_CLIENT_SECRET: "client-secret-unit-1",
  CONNECTOR_ACCOUNTING_ENVIRONMENT: "us2",
  CONNECTOR_ACCOUNTING_USERNAME: "api.admin",
  CONNECTOR_ACCOUNTING_API_KEY: "api-key-unit-1",
  CONNECTOR_ACCOUNTING_SCOPE: "DataIngestionAPI instance_3f2504e0-4f89-11d3-9a0c-0305e82c3301",
  ...PLATFORM,
};

/** The ConfigError's issues `run` throws, by variable. */
function issuesOf(run: () => unknown): Record<string, string> {
  try {
    run();
  } catch (error) {
    if (!ConfigError.is(error)) throw error;
    return Object.fromEntries(error.issues.map((i) => [i.variable, i.message]));
  }
  throw new Error("no ConfigError");
}

describe("settingsToStore", () => {
  it("stores the given settings trimmed, blanks left out", () => {
    const stored = settingsToStore(
      "blackline",
      {
        ...BLACKLINE,
        CONNECTOR_ACCOUNTING_USERNAME: " api.admin ",
        CONNECTOR_ACCOUNTING_BASE_URL: "",
      },
      undefined,
    );

    expect(stored).toEqual(BLACKLINE);
  });

  it("keeps a stored secret sent as null, and refuses null for a field that is not secret", () => {
    const stored = { ...BLACKLINE, CONNECTOR_ACCOUNTING_API_KEY: "stored-key-unit-2" };

    const kept = settingsToStore(
      "blackline",
      { ...BLACKLINE, CONNECTOR_ACCOUNTING_API_KEY: null, CONNECTOR_CLIENT_SECRET: null },
      stored,
    );
    const refused = issuesOf(() =>
      settingsToStore("blackline", { ...BLACKLINE, CONNECTOR_ACCOUNTING_USERNAME: null }, stored),
    );

    expect(kept.CONNECTOR_ACCOUNTING_API_KEY).toBe("stored-key-unit-2");
    expect(kept.CONNECTOR_CLIENT_SECRET).toBe(PLATFORM.CONNECTOR_CLIENT_SECRET);
    expect(Object.keys(refused)).toEqual(["CONNECTOR_ACCOUNTING_USERNAME"]);
    expect(refused.CONNECTOR_ACCOUNTING_USERNAME).toMatch(/only for a secret field/);
  });

  it("says a null secret with nothing stored is not set, as sync says it", () => {
    const issues = issuesOf(() =>
      settingsToStore("blackline", { ...BLACKLINE, CONNECTOR_ACCOUNTING_API_KEY: null }, undefined),
    );

    expect(issues).toEqual({
      CONNECTOR_ACCOUNTING_API_KEY: expect.stringMatching(/^is not set; set it .* API key/),
    });
  });

  it("refuses a name that is not the instance's setting, and reads no *_FILE", () => {
    const issues = issuesOf(() =>
      settingsToStore(
        "valimail",
        { ...BLACKLINE, CONNECTOR_EMAILAUTH_APP_ID_FILE: "/etc/passwd" },
        undefined,
      ),
    );

    expect(issues.CONNECTOR_ACCOUNTING_SCOPE).toMatch(/is not a setting of a Valimail instance/);
    expect(issues.CONNECTOR_EMAILAUTH_APP_ID_FILE).toMatch(
      /reads no file.*send the value itself as CONNECTOR_EMAILAUTH_APP_ID/,
    );
    // The connector's own schema still names what is missing.
    expect(issues.CONNECTOR_EMAILAUTH_SLUG).toMatch(/^is not set/);
  });

  it("checks the removal limit with the other fields", () => {
    const issues = issuesOf(() =>
      settingsToStore(
        "blackline",
        { ...BLACKLINE, CONNECTOR_MAX_REMOVAL_PERCENT: "lots", CONNECTOR_PLATFORM_URL: "ftp://x" },
        undefined,
      ),
    );

    expect(Object.keys(issues).sort()).toEqual([
      "CONNECTOR_MAX_REMOVAL_PERCENT",
      "CONNECTOR_PLATFORM_URL",
    ]);
  });

  it("leaves a scope without instance_ to the caller, naming its field, when it is the only mistake", () => {
    const run = () =>
      settingsToStore(
        "blackline",
        { ...BLACKLINE, CONNECTOR_ACCOUNTING_SCOPE: "DataIngestionAPI" },
        undefined,
      );

    expect(run).toThrow(CredentialsRejectedError);
    try {
      run();
    } catch (error) {
      expect((error as CredentialsRejectedError).field).toBe("CONNECTOR_ACCOUNTING_SCOPE");
    }
  });
});

describe("fieldError", () => {
  it("splits 'what is wrong; how to fix it' at the first '; ' after a quoted value", () => {
    expect(
      fieldError({
        variable: "CONNECTOR_ACCOUNTING_ENVIRONMENT",
        message: '"a; b" is not a single DNS label; the environment is the region subdomain',
      }),
    ).toEqual({
      field: "CONNECTOR_ACCOUNTING_ENVIRONMENT",
      message: '"a; b" is not a single DNS label',
      fix: "the environment is the region subdomain",
    });
    expect(fieldError({ variable: "X", message: "is not set; set it to the id" })).toEqual({
      field: "X",
      message: "is not set",
      fix: "set it to the id",
    });
  });

  it("takes a rule with no fix part as its own fix, and drops a repeated variable in front", () => {
    expect(
      fieldError({ variable: "N", message: "N: must be a whole number from 1 to 64" }),
    ).toEqual({
      field: "N",
      message: "must be a whole number from 1 to 64",
      fix: "must be a whole number from 1 to 64",
    });
  });
});

describe("settingsRequest", () => {
  it("takes the four ops, with save's defaults", () => {
    const save = settingsRequest.parse({
      requestId: "r",
      op: "save",
      connectorId: "bl-prod",
      connector: "blackline",
      settings: { CONNECTOR_CLIENT_SECRET: null },
    });

    expect(save).toMatchObject({ sync: true });
    expect(save).not.toHaveProperty("interval");
    expect(settingsRequest.parse({ requestId: "r", op: "remove", connectorId: "x" })).toMatchObject(
      {
        force: false,
      },
    );
    expect(settingsRequest.safeParse({ requestId: "r", op: "get", connectorId: "x" }).success).toBe(
      true,
    );
  });

  it("refuses what is not a request: another op, a path in an id, a value that is not text", () => {
    for (const request of [
      { requestId: "r", op: "list" },
      { requestId: "r", op: "get", connectorId: "a/b" },
      { requestId: "r", op: "test", connector: "blackline", settings: { CONNECTOR_CLIENT_ID: 5 } },
      { requestId: "r", op: "test", connector: "blackline", settings: { "lower-case": "x" } },
      { requestId: "", op: "get", connectorId: "x" },
    ]) {
      expect(settingsRequest.safeParse(request).success, JSON.stringify(request)).toBe(false);
    }
  });
});
