import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { loadCloudConfig } from "../../lib/cloud/config";
import { pickInstanceSettings, validateInstanceSettings } from "../../lib/cloud/instanceSettings";
import { settingsToStore } from "../../lib/cloud/settings/settingsToStore";
import { DNS_LABEL, loadEnvironment } from "../../lib/config";
import { BLACKLINE_VARIABLES, loadBlacklineConfig } from "../../lib/connectors/blackline";
import { loadValimailConfig, VALIMAIL_VARIABLES } from "../../lib/connectors/valimail";
import {
  loadPlatformConfig,
  loadPlatformConnection,
  PLATFORM_VARIABLE_HINTS,
} from "../../lib/platform";
import { loadServiceConfig } from "../../lib/service/config";
import { SERVICE_VARIABLES } from "../../lib/service/constants";
import { makeTempDir } from "../helpers/tempDir";
import { expectConfigOutcome, hostileText, IO_RUNS } from "./settings";

/**
 * Configuration values from every source a user controls (environment, env file, `*_FILE`, a
 * cloud instance's settings): any value gives a valid configuration or a `ConfigError` naming the
 * variable; a valid one only ever points at the host the user configured.
 */

const KEEP = Symbol("keep");
const GUID = "3f2504e0-4f89-11d3-9a0c-0305e82c3301";

const BLACKLINE_VALID: Record<string, string> = {
  CONNECTOR_ACCOUNTING_CLIENT_ID: "client-1",
  CONNECTOR_ACCOUNTING_CLIENT_SECRET: "client-secret-1",
  CONNECTOR_ACCOUNTING_ENVIRONMENT: "us2",
  CONNECTOR_ACCOUNTING_USERNAME: "api.user",
  CONNECTOR_ACCOUNTING_API_KEY: "api-key-1",
  CONNECTOR_ACCOUNTING_SCOPE: `DataIngestionAPI instance_${GUID}`,
};
const VALIMAIL_VALID: Record<string, string> = {
  CONNECTOR_EMAILAUTH_CLIENT_ID: "34acfc47-e910-4dcc-bb22-e2816f7e1e4c",
  CONNECTOR_EMAILAUTH_APP_ID: "358e2665-dfb9-4a9f-b8db-c0404b7bf087",
  CONNECTOR_EMAILAUTH_SLUG: "acme",
};
const PLATFORM_VALID: Record<string, string> = {
  CONNECTOR_PLATFORM_URL: "https://platform.example.com/api",
  CONNECTOR_CLIENT_ID: "platform-client",
  CONNECTOR_CLIENT_SECRET: "platform-secret",
  CONNECTOR_HOST_ID: "acme-1",
};
const PLATFORM_VARIABLES = Object.keys(PLATFORM_VARIABLE_HINTS);

/** Values worth trying in particular variables, besides hostile text. */
const SPECIFIC = fc.constantFrom(
  "us2",
  "US2",
  " us2 ",
  "acme corp",
  "us2.api.blackline.com",
  "https://us2.api.blackline.com",
  "http://127.0.0.1:9",
  "http://localhost:9/base/",
  "http://[::1]:9",
  "http://127.1:9",
  "http://evil.example.com",
  "https://evil.example.com:99999",
  "https://platform.example.com/api?x=1",
  `instance_${GUID}`,
  `A instance_${GUID} instance_${GUID}`,
  "DataIngestionAPI instance_not-a-guid",
  "DataIngestionAPI",
  "body",
  "BASIC",
  "1",
  "64",
  "65",
  "0",
  " 8 ",
  "1000",
  "10001",
  "90s",
  "30m",
  "1h",
  "169h",
  "0s",
  "true",
  "TRUE",
  "debug",
  "https://app.valimail.com/app/acme/dashboard",
  "acme_co-1",
);

const value = fc.oneof(
  { weight: 2, arbitrary: hostileText },
  { weight: 2, arbitrary: SPECIFIC },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

/** An environment: a valid one with some variables replaced, removed or added. */
function environment(valid: Record<string, string>, variables: readonly string[]) {
  return fc
    .record(
      Object.fromEntries(
        variables.map((name) => [
          name,
          fc.oneof(
            { weight: 3, arbitrary: fc.constant<typeof KEEP>(KEEP) },
            { weight: 1, arbitrary: value },
          ),
        ]),
      ),
    )
    .map((changes) => {
      const env: Record<string, string | undefined> = { ...valid };
      for (const [name, change] of Object.entries(changes)) {
        if (change !== KEEP) env[name] = change as string | undefined;
      }
      return env;
    });
}

let files: string[] = [];
let secretFile = "";
beforeAll(async () => {
  const dir = await makeTempDir("ac-property-config-");
  secretFile = join(dir, "secret");
  writeFileSync(secretFile, "from-a-file\n\n");
  const big = join(dir, "big");
  writeFileSync(big, "x".repeat(70 * 1024));
  const empty = join(dir, "empty");
  writeFileSync(empty, "");
  const fifo = join(dir, "fifo");
  execFileSync("mkfifo", [fifo]);
  const sub = join(dir, "dir");
  mkdirSync(sub);
  files = [secretFile, big, empty, fifo, sub, join(dir, "missing"), "/dev/null", "/dev/zero", ""];
});

/** `*_FILE` variables of `secrets`, each unset or one of the prepared paths (never a hang). */
function secretFiles(secrets: readonly string[]) {
  return fc.record(
    Object.fromEntries(
      secrets.map((name) => [
        `${name}_FILE`,
        fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, fc.constantFrom(...files)),
      ]),
    ),
  );
}

function hostOf(url: string): string {
  return new URL(url).host;
}

/** A base URL the configuration accepted must be the one given, normalised, on its host. */
function expectConfiguredBase(actual: string, given: string | undefined) {
  if (given === undefined || given.trim() === "") return false;
  const url = new URL(given.trim());
  expect(hostOf(actual)).toBe(url.host);
  expect(["https:", "http:"]).toContain(new URL(actual).protocol);
  if (new URL(actual).protocol === "http:") {
    expect(["127.0.0.1", "[::1]", "localhost"]).toContain(url.hostname);
  }
  return true;
}

describe("configuration values (property)", () => {
  it("BlackLine: a valid configuration on the configured host, or an error naming the variable", () => {
    fc.assert(
      fc.property(
        environment(BLACKLINE_VALID, BLACKLINE_VARIABLES),
        fc
          .constant(null)
          .chain(() =>
            secretFiles(["CONNECTOR_ACCOUNTING_CLIENT_SECRET", "CONNECTOR_ACCOUNTING_API_KEY"]),
          ),
        (env, fileVars) => {
          const all = { ...env, ...fileVars };
          const config = expectConfigOutcome(() => loadBlacklineConfig(all), BLACKLINE_VARIABLES, {
            credentials: /CONNECTOR_ACCOUNTING_SCOPE: .*instance_/,
          });
          if (!config) return;
          if (!expectConfiguredBase(config.baseUrl, all.CONNECTOR_ACCOUNTING_BASE_URL)) {
            const label = all.CONNECTOR_ACCOUNTING_ENVIRONMENT ?? "";
            expect(label).toMatch(DNS_LABEL);
            expect(new URL(config.baseUrl).hostname).toBe(
              `${label.toLowerCase()}.api.blackline.com`,
            );
          }
          expect(config.maxConcurrency).toBeGreaterThanOrEqual(1);
          expect(config.maxConcurrency).toBeLessThanOrEqual(64);
          expect(config.pageSize).toBeGreaterThanOrEqual(1);
          // Unset: learned from the upstream's answers.
          expect(config.requestsPerSecond ?? 0).toBeGreaterThanOrEqual(0);
          expect(config.rateLimitWaitSeconds).toBeGreaterThanOrEqual(1);
          expect(config.scope.split(" ").filter((t) => /^instance_/i.test(t))).toHaveLength(1);
          expect(["body", "basic"]).toContain(config.clientAuth);
        },
      ),
    );
  });

  it("Valimail: a valid configuration on the configured host, or an error naming the variable", () => {
    fc.assert(
      fc.property(
        environment(VALIMAIL_VALID, VALIMAIL_VARIABLES),
        fc
          .constant(null)
          .chain(() =>
            secretFiles(["CONNECTOR_EMAILAUTH_CLIENT_ID", "CONNECTOR_EMAILAUTH_APP_ID"]),
          ),
        (env, fileVars) => {
          const all = { ...env, ...fileVars };
          const config = expectConfigOutcome(() => loadValimailConfig(all), VALIMAIL_VARIABLES);
          if (!config) return;
          if (!expectConfiguredBase(config.baseUrl, all.CONNECTOR_EMAILAUTH_BASE_URL)) {
            expect(config.baseUrl).toBe("https://api.valimail.com");
          }
          // The slug becomes one path segment: nothing in it can leave the account's path.
          expect(config.slug).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]*$/);
          expect(config.provisioning).toBe(all.CONNECTOR_PROVISIONING === "true");
          expect(config.clientId.length).toBeGreaterThan(0);
        },
      ),
    );
  });

  it("platform (service and upload identity): a valid connection, or an error naming the variable", () => {
    fc.assert(
      fc.property(environment(PLATFORM_VALID, PLATFORM_VARIABLES), (env) => {
        const full = expectConfigOutcome(() => loadPlatformConfig(env), PLATFORM_VARIABLES);
        const connection = expectConfigOutcome(
          () => loadPlatformConnection(env),
          PLATFORM_VARIABLES,
        );
        if (full) {
          expect(connection).toBeDefined();
          expectConfiguredBase(full.platformUrl, env.CONNECTOR_PLATFORM_URL);
          expect(full.hostId).toMatch(/^\S+$/);
          expect(full.syncIntervalMs).toBeGreaterThanOrEqual(1_000);
          expect(full.syncIntervalMs).toBeLessThanOrEqual(7 * 24 * 3_600_000);
        }
        if (connection) expectConfiguredBase(connection.platformUrl, env.CONNECTOR_PLATFORM_URL);
      }),
    );
  });

  it("service mode: a configuration, or every problem named at once (exit 2 or 3)", async () => {
    const stateRoot = await makeTempDir("ac-property-service-");
    const variables = [
      ...BLACKLINE_VARIABLES,
      ...VALIMAIL_VARIABLES,
      ...PLATFORM_VARIABLES,
      ...Object.values(SERVICE_VARIABLES),
      "<connector>",
    ];
    const serviceVars = fc.record({
      argument: fc.option(
        fc.constantFrom("blackline", "valimail", "BlackLine", " valimail ", "other", ""),
        {
          nil: undefined,
        },
      ),
      CONNECTOR_NAME: fc.option(
        fc.oneof(fc.constantFrom("blackline", "valimail", "VALIMAIL"), hostileText),
        {
          nil: undefined,
        },
      ),
      CONNECTOR_LOG_LEVEL: fc.option(
        fc.oneof(fc.constantFrom("debug", "INFO", " warn ", "trace"), hostileText),
        {
          nil: undefined,
        },
      ),
      // Kept inside a temporary directory: the loader creates the state directory.
      stateDir: fc.constantFrom("state", "a/b", "file-not-dir"),
      healthFile: fc.option(
        fc.constantFrom("health.json", "missing/health.json", "file-not-dir/h.json"),
        {
          nil: undefined,
        },
      ),
    });
    writeFileSync(join(stateRoot, "file-not-dir"), "");
    await fc.assert(
      fc.asyncProperty(
        environment(
          { ...BLACKLINE_VALID, ...VALIMAIL_VALID, ...PLATFORM_VALID },
          variables.slice(0, -5),
        ),
        serviceVars,
        async (env, service) => {
          const all = {
            ...env,
            CONNECTOR_NAME: service.CONNECTOR_NAME,
            CONNECTOR_LOG_LEVEL: service.CONNECTOR_LOG_LEVEL,
            CONNECTOR_STATE_DIR: join(stateRoot, service.stateDir),
            CONNECTOR_HEALTH_FILE:
              service.healthFile === undefined ? undefined : join(stateRoot, service.healthFile),
          };
          let config: Awaited<ReturnType<typeof loadServiceConfig>> | undefined;
          try {
            config = await loadServiceConfig(service.argument, all);
          } catch (error) {
            expectConfigOutcome(
              () => {
                throw error;
              },
              variables,
              { credentials: /CONNECTOR_ACCOUNTING_SCOPE: .*instance_/ },
            );
            return;
          }
          expect(["blackline", "valimail"]).toContain(config.connector);
          expect(["debug", "info", "warn", "error"]).toContain(config.logLevel);
          expect(config.stateDir.startsWith(stateRoot)).toBe(true);
        },
      ),
      IO_RUNS,
    );
  });

  it("cloud functions' environment: a configuration, or a ConfigError naming the variable", () => {
    const valid: Record<string, string> = {
      STAGE: "dev",
      INSTANCES_TABLE: "instances",
      RUNS_TABLE: "runs",
      IDEMPOTENCY_TABLE: "idempotency",
      SHARDS_BUCKET: "shards",
      SYNC_JOBS_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/1/jobs",
      FINALIZE_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/1/finalize",
      INSTANCE_CHECKS_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/1/instance-checks",
      SECRETS_PREFIX: "access-connectors/dev/",
      JOB_MAX_RECEIVES: "5",
      RUN_STALL_SECONDS: "900",
    };
    const variables = [...Object.keys(valid), "environment"];
    fc.assert(
      fc.property(environment(valid, Object.keys(valid)), (env) => {
        const config = expectConfigOutcome(() => loadCloudConfig(env), variables);
        if (!config) return;
        expect(Number.isInteger(config.jobMaxReceives) && config.jobMaxReceives >= 1).toBe(true);
        expect(Number.isInteger(config.runStallSeconds) && config.runStallSeconds >= 60).toBe(true);
      }),
    );
  });

  it("put-instance: settings it accepts are exactly what the runtime reads back and accepts", () => {
    const connectors = fc.constantFrom("blackline" as const, "valimail" as const);
    fc.assert(
      fc.property(
        connectors,
        environment({ ...BLACKLINE_VALID, ...VALIMAIL_VALID, ...PLATFORM_VALID }, [
          ...BLACKLINE_VARIABLES,
          ...VALIMAIL_VARIABLES,
          ...PLATFORM_VARIABLES,
        ]),
        (connector, env) => {
          const variables = [
            ...(connector === "blackline" ? BLACKLINE_VARIABLES : VALIMAIL_VARIABLES),
            ...PLATFORM_VARIABLES,
          ];
          const settings = expectConfigOutcome(
            // What `cloud put-instance` stores: a save of the variables it picks from env.
            () => settingsToStore(connector, pickInstanceSettings(connector, env), undefined),
            variables,
            {
              credentials: /CONNECTOR_ACCOUNTING_SCOPE: .*instance_/,
            },
          );
          if (!settings) return;
          for (const [name, stored] of Object.entries(settings)) {
            expect(variables).toContain(name);
            expect(stored).toBe(stored.trim());
            expect(stored.length).toBeGreaterThan(0);
          }
          // What the secret holds is read by the functions with the same schemas: it must pass.
          expect(() => validateInstanceSettings(connector, settings)).not.toThrow();
        },
      ),
    );
  });

  it("put-instance: a secret given in a *_FILE is stored exactly as the same value given inline", () => {
    const secretNames = [
      "CONNECTOR_ACCOUNTING_CLIENT_SECRET",
      "CONNECTOR_ACCOUNTING_API_KEY",
      "CONNECTOR_EMAILAUTH_CLIENT_ID",
      "CONNECTOR_EMAILAUTH_APP_ID",
      "CONNECTOR_CLIENT_SECRET",
    ];
    fc.assert(
      fc.property(
        fc.constantFrom("blackline" as const, "valimail" as const),
        fc.subarray(secretNames, { minLength: 1 }),
        (connector, fromFiles) => {
          const inline: Record<string, string | undefined> = {
            ...BLACKLINE_VALID,
            ...VALIMAIL_VALID,
            ...PLATFORM_VALID,
          };
          const viaFiles = { ...inline };
          for (const name of fromFiles) {
            inline[name] = "from-a-file";
            viaFiles[name] = undefined;
            viaFiles[`${name}_FILE`] = secretFile;
          }
          expect(pickInstanceSettings(connector, viaFiles)).toEqual(
            pickInstanceSettings(connector, inline),
          );
        },
      ),
      { numRuns: 30 },
    );
  });

  it("--env-file: any file content gives variables (the environment winning) or a ConfigError", () => {
    const line = fc.oneof(
      fc.tuple(fc.constantFrom(...BLACKLINE_VARIABLES), hostileText).map(([k, v]) => `${k}=${v}`),
      fc
        .tuple(fc.constantFrom(...BLACKLINE_VARIABLES), fc.string())
        .map(([k, v]) => `export ${k}="${v}"`),
      fc.string(),
      fc.constantFrom("#comment", "=", "A", "A=", "A='unclosed", 'B="multi\nline"', "\r"),
    );
    const envFile = join(dirname(secretFile), "property.env");
    fc.assert(
      fc.property(fc.array(line, { maxLength: 8 }), (lines) => {
        writeFileSync(envFile, lines.join("\n"));
        const env = expectConfigOutcome(
          () =>
            loadEnvironment({
              envFile,
              env: { CONNECTOR_ACCOUNTING_SCOPE: "from-the-environment" },
            }),
          ["--env-file"],
        );
        if (!env) return;
        expect(env.CONNECTOR_ACCOUNTING_SCOPE).toBe("from-the-environment");
        // Whatever the file held, loading a connector from it is a configuration or a ConfigError.
        expectConfigOutcome(() => loadBlacklineConfig(env), BLACKLINE_VARIABLES, {
          credentials: /CONNECTOR_ACCOUNTING_SCOPE: .*instance_/,
        });
      }),
      { numRuns: 100 },
    );
  });

  it("a secret from a *_FILE is the file's value without its trailing line breaks", () => {
    const config = loadBlacklineConfig({
      ...BLACKLINE_VALID,
      CONNECTOR_ACCOUNTING_API_KEY: undefined,
      CONNECTOR_ACCOUNTING_API_KEY_FILE: secretFile,
    });
    expect(config.apiKey).toBe("from-a-file");
  });
});
