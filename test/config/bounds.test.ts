/** The bounds' variables: defaults when unset, values when set, precise refusals otherwise. */
import { describe, expect, it } from "vitest";
import { loadBlacklineConfig } from "../../lib/connectors/blackline";
import { loadValimailConfig } from "../../lib/connectors/valimail";
import { ConfigError } from "../../lib/errors";

const BLACKLINE = {
  CONNECTOR_ACCOUNTING_CLIENT_ID: "id",
  CONNECTOR_ACCOUNTING_CLIENT_SECRET: "secret-for-bounds-test",
  CONNECTOR_ACCOUNTING_ENVIRONMENT: "us2",
  CONNECTOR_ACCOUNTING_USERNAME: "api.user",
  CONNECTOR_ACCOUNTING_API_KEY: "key-for-bounds-test",
  CONNECTOR_ACCOUNTING_SCOPE: "DataIngestionAPI instance_3f2504e0-4f89-11d3-9a0c-0305e82c3301",
};
const VALIMAIL = {
  CONNECTOR_EMAILAUTH_CLIENT_ID: "client-for-bounds-test",
  CONNECTOR_EMAILAUTH_APP_ID: "app-for-bounds-test",
  CONNECTOR_EMAILAUTH_SLUG: "acme",
};

function problemOf(env: Record<string, string>): string {
  try {
    loadBlacklineConfig({ ...BLACKLINE, ...env });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("no problem reported");
}

describe("bounds left unset", () => {
  it("keep the defaults, and name the variable of each", () => {
    const { bounds } = loadBlacklineConfig(BLACKLINE);

    expect(bounds).toEqual({
      maxResponseBytes: { value: 64 * 2 ** 20, variable: "CONNECTOR_ACCOUNTING_MAX_RESPONSE_MIB" },
      // The runtime's own: 30 s from the command line and the service, 20 s in the cloud.
      requestTimeoutMs: { value: undefined, variable: "CONNECTOR_ACCOUNTING_REQUEST_TIMEOUT" },
      maxPagesPerList: { value: 100_000, variable: "CONNECTOR_ACCOUNTING_MAX_PAGES_PER_LIST" },
      syncDeadlineMs: { value: 6 * 3_600_000, variable: "CONNECTOR_ACCOUNTING_SYNC_DEADLINE" },
      pageSizeVariable: "CONNECTOR_ACCOUNTING_PAGE_SIZE",
    });
    expect(loadValimailConfig(VALIMAIL).bounds.syncDeadlineMs).toEqual({
      value: 6 * 3_600_000,
      variable: "CONNECTOR_EMAILAUTH_SYNC_DEADLINE",
    });
  });
});

describe("bounds that are set", () => {
  it("are read in their units", () => {
    const { bounds } = loadValimailConfig({
      ...VALIMAIL,
      CONNECTOR_EMAILAUTH_MAX_RESPONSE_MIB: "8",
      CONNECTOR_EMAILAUTH_REQUEST_TIMEOUT: "90s",
      CONNECTOR_EMAILAUTH_MAX_PAGES_PER_LIST: "500",
      CONNECTOR_EMAILAUTH_SYNC_DEADLINE: "45m",
    });

    expect(bounds.maxResponseBytes.value).toBe(8 * 2 ** 20);
    expect(bounds.requestTimeoutMs.value).toBe(90_000);
    expect(bounds.maxPagesPerList.value).toBe(500);
    expect(bounds.syncDeadlineMs.value).toBe(45 * 60_000);
  });

  it("take a duration in seconds, ms, s, m or h", () => {
    const timeout = (text: string) =>
      loadBlacklineConfig({ ...BLACKLINE, CONNECTOR_ACCOUNTING_REQUEST_TIMEOUT: text }).bounds
        .requestTimeoutMs.value;

    expect(timeout("45")).toBe(45_000);
    expect(timeout("1500ms")).toBe(1_500);
    expect(timeout(" 2m ")).toBe(120_000);
    expect(
      loadBlacklineConfig({ ...BLACKLINE, CONNECTOR_ACCOUNTING_SYNC_DEADLINE: "12H" }).bounds
        .syncDeadlineMs.value,
    ).toBe(12 * 3_600_000);
  });
});

describe("bad bounds are refused (exit 2) with the variable and what to write", () => {
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    [
      "a size that is not a number",
      { CONNECTOR_ACCOUNTING_MAX_RESPONSE_MIB: "64MB" },
      /^CONNECTOR_ACCOUNTING_MAX_RESPONSE_MIB: must be a whole number from 1 to 1024$/,
    ],
    [
      "a size of zero",
      { CONNECTOR_ACCOUNTING_MAX_RESPONSE_MIB: "0" },
      /^CONNECTOR_ACCOUNTING_MAX_RESPONSE_MIB: must be at least 1$/,
    ],
    [
      "a size over a gibibyte",
      { CONNECTOR_ACCOUNTING_MAX_RESPONSE_MIB: "4096" },
      /^CONNECTOR_ACCOUNTING_MAX_RESPONSE_MIB: must be at most 1024$/,
    ],
    [
      "a timeout in an unknown unit",
      { CONNECTOR_ACCOUNTING_REQUEST_TIMEOUT: "30 sec" },
      /^CONNECTOR_ACCOUNTING_REQUEST_TIMEOUT: "30 sec" is not a duration; write a whole number of seconds, or a whole number followed by ms, s, m or h \(e\.g\. 90s, 30m, 6h\), from 1s to 10m$/,
    ],
    [
      "a timeout under a second",
      { CONNECTOR_ACCOUNTING_REQUEST_TIMEOUT: "200ms" },
      /^CONNECTOR_ACCOUNTING_REQUEST_TIMEOUT: "200ms" is too short; give a duration from 1s to 10m$/,
    ],
    [
      "a page cap of zero",
      { CONNECTOR_ACCOUNTING_MAX_PAGES_PER_LIST: "0" },
      /^CONNECTOR_ACCOUNTING_MAX_PAGES_PER_LIST: must be at least 1$/,
    ],
    [
      "a negative page cap",
      { CONNECTOR_ACCOUNTING_MAX_PAGES_PER_LIST: "-5" },
      /^CONNECTOR_ACCOUNTING_MAX_PAGES_PER_LIST: must be a whole number from 1 to 10000000$/,
    ],
    [
      "a deadline over a week",
      { CONNECTOR_ACCOUNTING_SYNC_DEADLINE: "200h" },
      /^CONNECTOR_ACCOUNTING_SYNC_DEADLINE: "200h" is too long; give a duration from 1s to 168h$/,
    ],
  ];
  for (const [name, env, message] of cases) {
    it(name, () => {
      expect(problemOf(env)).toMatch(message);
    });
  }

  it("reports every bad bound at once", () => {
    const message = problemOf({
      CONNECTOR_ACCOUNTING_MAX_RESPONSE_MIB: "x",
      CONNECTOR_ACCOUNTING_SYNC_DEADLINE: "soon",
    });
    expect(message).toMatch(/^2 configuration problems:/);
    expect(message).toMatch(/CONNECTOR_ACCOUNTING_MAX_RESPONSE_MIB: /);
    expect(message).toMatch(/CONNECTOR_ACCOUNTING_SYNC_DEADLINE: "soon" is not a duration/);
  });
});
