import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseSettings } from "../../lib/config";
import { ConfigError, ExitCode } from "../../lib/errors";
import {
  IntervalError,
  loadPlatformConfig,
  loadPlatformConnection,
  PLATFORM_SECRET_VARIABLES,
  PLATFORM_VARIABLE_HINTS,
  parseInterval,
  platformSettingsSchema,
} from "../../lib/platform";
import { makeTempDir } from "../helpers/tempDir";

const SECRET = "platform-secret-7d1e44b0";

const VALID = {
  CONNECTOR_PLATFORM_URL: "https://platform.example.com/api/",
  CONNECTOR_CLIENT_ID: "client-42",
  CONNECTOR_CLIENT_SECRET: SECRET,
  CONNECTOR_HOST_ID: "host-eu-1",
} as const;

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("loadPlatformConfig", () => {
  it("reads the four variables, trims the address and defaults the interval to one hour", () => {
    const config = loadPlatformConfig(VALID);

    expect(config).toEqual({
      platformUrl: "https://platform.example.com/api",
      clientId: "client-42",
      clientSecret: SECRET,
      hostId: "host-eu-1",
      syncIntervalMs: 3_600_000,
    });
  });

  it("names every missing variable with what to set, and says the address has no default", () => {
    const error = configError(() => loadPlatformConfig({}));

    expect(error.exitCode).toBe(ExitCode.usage);
    expect(error.issues.map((issue) => issue.variable).sort()).toEqual([
      "CONNECTOR_CLIENT_ID",
      "CONNECTOR_CLIENT_SECRET",
      "CONNECTOR_HOST_ID",
      "CONNECTOR_PLATFORM_URL",
    ]);
    const url = error.issues.find((issue) => issue.variable === "CONNECTOR_PLATFORM_URL");
    expect(url?.message).toMatch(/^is not set; set it to the platform's API base address/);
    expect(url?.message).toContain("there is no default");
    const secret = error.issues.find((issue) => issue.variable === "CONNECTOR_CLIENT_SECRET");
    expect(secret?.message).toContain("CONNECTOR_CLIENT_SECRET_FILE");
  });

  it("treats a blank value as missing", () => {
    const error = configError(() => loadPlatformConfig({ ...VALID, CONNECTOR_HOST_ID: "  " }));

    expect(error.message).toBe(
      `CONNECTOR_HOST_ID: is not set; ${PLATFORM_VARIABLE_HINTS.CONNECTOR_HOST_ID}`,
    );
  });

  it("refuses a plain-http address except on loopback", () => {
    const error = configError(() =>
      loadPlatformConfig({ ...VALID, CONNECTOR_PLATFORM_URL: "http://platform.example.com" }),
    );

    expect(error.message).toBe(
      "CONNECTOR_PLATFORM_URL: must start with https:// (http:// is allowed only for 127.0.0.1, [::1] and localhost), got http://",
    );
    expect(
      loadPlatformConfig({ ...VALID, CONNECTOR_PLATFORM_URL: "http://127.0.0.1:8080" }).platformUrl,
    ).toBe("http://127.0.0.1:8080");
  });

  it("says what to write when the address is not one", () => {
    const error = configError(() =>
      loadPlatformConfig({ ...VALID, CONNECTOR_PLATFORM_URL: "platform.example.com" }),
    );

    expect(error.message).toBe(
      'CONNECTOR_PLATFORM_URL: "platform.example.com" is not an address; give one like https://host.example.com',
    );
  });

  it("reads the interval in seconds, minutes or hours", () => {
    expect(loadPlatformConfig({ ...VALID, CONNECTOR_SYNC_INTERVAL: "30m" }).syncIntervalMs).toBe(
      1_800_000,
    );
    const error = configError(() =>
      loadPlatformConfig({ ...VALID, CONNECTOR_SYNC_INTERVAL: "1d" }),
    );
    expect(error.issues).toEqual([
      {
        variable: "CONNECTOR_SYNC_INTERVAL",
        message:
          '"1d" is not an interval; write a whole number of seconds, or a whole number followed by s, m or h (e.g. 90s, 30m, 1h, 24h)',
      },
    ]);
  });

  it("reports every problem at once", () => {
    const error = configError(() =>
      loadPlatformConfig({
        ...VALID,
        CONNECTOR_PLATFORM_URL: "ftp://platform.example.com",
        CONNECTOR_HOST_ID: "host with spaces",
        CONNECTOR_SYNC_INTERVAL: "0",
      }),
    );

    expect(error.issues.map((issue) => issue.variable)).toEqual([
      "CONNECTOR_PLATFORM_URL",
      "CONNECTOR_HOST_ID",
      "CONNECTOR_SYNC_INTERVAL",
    ]);
    expect(error.message).toContain("CONNECTOR_HOST_ID: must be one word without spaces");
    expect(error.message).toContain('CONNECTOR_SYNC_INTERVAL: "0" is too short');
  });

  it("reads the secret from CONNECTOR_CLIENT_SECRET_FILE, without its trailing newline", async () => {
    const file = join(await makeTempDir(), "secret");
    await writeFile(file, `${SECRET}\n`);
    const { CONNECTOR_CLIENT_SECRET: _, ...rest } = VALID;

    const config = loadPlatformConfig({ ...rest, CONNECTOR_CLIENT_SECRET_FILE: file });

    expect(config.clientSecret).toBe(SECRET);
    expect(PLATFORM_SECRET_VARIABLES).toEqual(["CONNECTOR_CLIENT_SECRET"]);
  });

  it("refuses both CONNECTOR_CLIENT_SECRET and CONNECTOR_CLIENT_SECRET_FILE", async () => {
    const file = join(await makeTempDir(), "secret");
    await writeFile(file, SECRET);

    const error = configError(() =>
      loadPlatformConfig({ ...VALID, CONNECTOR_CLIENT_SECRET_FILE: file }),
    );

    expect(error.exitCode).toBe(ExitCode.usage);
    expect(error.message).toBe(
      "CONNECTOR_CLIENT_SECRET: both CONNECTOR_CLIENT_SECRET and CONNECTOR_CLIENT_SECRET_FILE are set; keep one of them",
    );
  });

  it("names an unreadable secret file", () => {
    const { CONNECTOR_CLIENT_SECRET: _, ...rest } = VALID;

    const error = configError(() =>
      loadPlatformConfig({ ...rest, CONNECTOR_CLIENT_SECRET_FILE: "/nonexistent/secret" }),
    );

    expect(error.message).toBe(
      "CONNECTOR_CLIENT_SECRET_FILE: cannot read /nonexistent/secret (ENOENT); give the path of a file that holds the value",
    );
  });

  it("never puts the secret in a message", () => {
    const error = configError(() =>
      loadPlatformConfig({ ...VALID, CONNECTOR_PLATFORM_URL: SECRET, CONNECTOR_HOST_ID: "" }),
    );

    expect(error.message).not.toContain(SECRET);
  });

  it("gives the same messages for a JSON secret object validated with the exported schema", () => {
    const fromJson = JSON.parse(
      '{"CONNECTOR_PLATFORM_URL":"http://platform.example.com","CONNECTOR_CLIENT_ID":"c"}',
    ) as Record<string, string>;

    const viaSchema = configError(() =>
      parseSettings(platformSettingsSchema, fromJson, PLATFORM_VARIABLE_HINTS),
    );
    const viaEnv = configError(() => loadPlatformConfig(fromJson));

    expect(viaSchema.message).toBe(viaEnv.message);
  });

  it("needs no host id nor interval for the upload identity alone", () => {
    const { CONNECTOR_HOST_ID: _, ...rest } = VALID;

    expect(loadPlatformConnection({ ...rest, CONNECTOR_SYNC_INTERVAL: "junk" })).toEqual({
      platformUrl: "https://platform.example.com/api",
      clientId: "client-42",
      clientSecret: SECRET,
    });
  });
});

describe("parseInterval", () => {
  it.each([
    ["90s", 90_000],
    ["30m", 1_800_000],
    ["1h", 3_600_000],
    ["24h", 86_400_000],
    ["3600", 3_600_000],
    [" 2H ", 7_200_000],
    ["45 m", 2_700_000],
    ["168h", 604_800_000],
  ])("reads %j as %i ms", (text, ms) => {
    expect(parseInterval(text)).toBe(ms);
  });

  it.each([
    ["1d", /"1d" is not an interval; write a whole number of seconds/],
    ["1.5h", /"1.5h" is not an interval/],
    ["-5", /"-5" is not an interval/],
    ["", /"" is not an interval/],
    ["hourly", /"hourly" is not an interval/],
    ["0", /"0" is too short; the interval is at least 1 second/],
    ["169h", /"169h" is too long; the interval is at most 168h \(7 days\)/],
  ])("refuses %j precisely", (text, message) => {
    expect(() => parseInterval(text)).toThrow(message);
    expect(() => parseInterval(text)).toThrow(IntervalError);
  });

  it("is a usage error (exit 2) for a command-line option", () => {
    const error = (() => {
      try {
        parseInterval("soon");
      } catch (caught) {
        return caught;
      }
    })();

    expect(IntervalError.is(error) && error.exitCode).toBe(ExitCode.usage);
    expect(IntervalError.is(error) && error.code).toBe("invalid_interval");
  });
});
