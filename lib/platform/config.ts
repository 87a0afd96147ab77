import * as z from "zod";
import {
  baseUrl,
  type Environment,
  formatDuration,
  parseDuration,
  parseSettings,
  resolveSecrets,
  type SettingMeta,
} from "../config";
import { ConfigError, messageOf } from "../errors";
import { redact } from "../redact";
import { DEFAULT_SYNC_INTERVAL_MS, MAX_SYNC_INTERVAL_MS, MIN_SYNC_INTERVAL_MS } from "./constants";
import { IntervalError } from "./errors";

/** Where the platform is and who this connector is to it: what every runtime that uploads needs. */
export interface PlatformConnection {
  platformUrl: string;
  clientId: string;
  clientSecret: string;
}

/** The settings of self-hosted service mode (docs/configuration.md, Platform). */
export interface PlatformConfig extends PlatformConnection {
  hostId: string;
  /** CONNECTOR_SYNC_INTERVAL in milliseconds. */
  syncIntervalMs: number;
}

/** The platform variables that hold secrets; each also accepts `<NAME>_FILE`. */
export const PLATFORM_SECRET_VARIABLES = ["CONNECTOR_CLIENT_SECRET"] as const;

/** Where each value comes from, shown when it is missing; also the list of variables read. */
export const PLATFORM_VARIABLE_HINTS = {
  CONNECTOR_PLATFORM_URL:
    "set it to the platform's API base address (https://...), shown with the connector's credentials in the platform; there is no default",
  CONNECTOR_CLIENT_ID: "set it to the client ID the platform issued for this connector",
  CONNECTOR_CLIENT_SECRET:
    "set it (or CONNECTOR_CLIENT_SECRET_FILE) to the client secret the platform issued with that client ID",
  CONNECTOR_HOST_ID: "set it to the identifier the platform gave this connector host",
  CONNECTOR_SYNC_INTERVAL: "optional",
} as const;

/**
 * A sync interval: `90s`, `30m`, `1h`, `24h`, or a whole number of seconds. Returns milliseconds;
 * throws `IntervalError` saying what to write instead.
 */
export function parseInterval(text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) {
    throw new IntervalError(
      `"${text}" is not an interval; write a whole number of seconds, or a whole number followed by s, m or h (e.g. 90s, 30m, 1h, 24h)`,
    );
  }
  if (ms < MIN_SYNC_INTERVAL_MS) {
    throw new IntervalError(`"${text}" is too short; the interval is at least 1 second`);
  }
  if (ms > MAX_SYNC_INTERVAL_MS) {
    throw new IntervalError(`"${text}" is too long; the interval is at most 168h (7 days)`);
  }
  return ms;
}

const interval = z.string().transform((value, ctx) => {
  try {
    return parseInterval(value);
  } catch (error) {
    ctx.addIssue({ code: "custom", message: messageOf(error) });
    return z.NEVER;
  }
});

const hostId = z
  .string()
  .trim()
  .regex(/^\S+$/, "must be one word without spaces; copy the host identifier from the platform")
  .max(200, "is longer than 200 characters; copy the host identifier from the platform");

const connectionFields = {
  CONNECTOR_PLATFORM_URL: baseUrl.describe("The platform's API base address."),
  CONNECTOR_CLIENT_ID: z
    .string()
    .trim()
    .describe("The client ID the platform issued for this connector."),
  CONNECTOR_CLIENT_SECRET: z.string().describe("The client secret the platform issued with it."),
};

/** The platform connection variables (URL, client ID, secret), for a runtime that only uploads. */
export const platformConnectionSchema = z.object(connectionFields).transform(
  (v): PlatformConnection => ({
    platformUrl: v.CONNECTOR_PLATFORM_URL,
    clientId: v.CONNECTOR_CLIENT_ID,
    clientSecret: v.CONNECTOR_CLIENT_SECRET,
  }),
);

/** Every platform variable of service mode, keyed by variable name; values are strings. */
export const platformSettingsSchema = z
  .object({
    ...connectionFields,
    CONNECTOR_HOST_ID: hostId.meta({
      type: "one word, at most 200 characters",
      description: "The identifier the platform gave this connector host (service only).",
    } satisfies SettingMeta),
    CONNECTOR_SYNC_INTERVAL: interval.default(DEFAULT_SYNC_INTERVAL_MS).meta({
      type: `duration, ${formatDuration(MIN_SYNC_INTERVAL_MS)} to ${formatDuration(MAX_SYNC_INTERVAL_MS)}`,
      unit: "ms",
      description: "Time between the service's scheduled syncs (a sync task moves the next one).",
    } satisfies SettingMeta),
  })
  .transform(
    (v): PlatformConfig => ({
      platformUrl: v.CONNECTOR_PLATFORM_URL,
      clientId: v.CONNECTOR_CLIENT_ID,
      clientSecret: v.CONNECTOR_CLIENT_SECRET,
      hostId: v.CONNECTOR_HOST_ID,
      syncIntervalMs: v.CONNECTOR_SYNC_INTERVAL,
    }),
  );

const CONNECTION_HINTS = {
  CONNECTOR_PLATFORM_URL: PLATFORM_VARIABLE_HINTS.CONNECTOR_PLATFORM_URL,
  CONNECTOR_CLIENT_ID: PLATFORM_VARIABLE_HINTS.CONNECTOR_CLIENT_ID,
  CONNECTOR_CLIENT_SECRET: PLATFORM_VARIABLE_HINTS.CONNECTOR_CLIENT_SECRET,
} as const;

/** Reads and validates the service-mode platform settings; secrets may come from `<NAME>_FILE`. */
export function loadPlatformConfig(env: Environment): PlatformConfig {
  const resolved = resolveSecrets(env, PLATFORM_SECRET_VARIABLES);
  return redactedIssues(() =>
    parseSettings(platformSettingsSchema, resolved, PLATFORM_VARIABLE_HINTS),
  );
}

/** Reads and validates the platform connection only (the cloud runtime's upload identity). */
export function loadPlatformConnection(env: Environment): PlatformConnection {
  const resolved = resolveSecrets(env, PLATFORM_SECRET_VARIABLES);
  return redactedIssues(() => parseSettings(platformConnectionSchema, resolved, CONNECTION_HINTS));
}

/** A message may quote a value; a secret pasted into the wrong variable must not be quoted. */
function redactedIssues<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (!ConfigError.is(error)) throw error;
    throw new ConfigError(
      error.issues.map((issue) => ({ variable: issue.variable, message: redact(issue.message) })),
    );
  }
}
