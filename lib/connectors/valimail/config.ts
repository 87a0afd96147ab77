import { z } from "zod";
import {
  baseUrl,
  boundSettings,
  type Environment,
  integerSetting,
  parseSettings,
  resolveSecrets,
  type UpstreamBounds,
  upstreamBounds,
} from "../../config";
import { DEFAULT_RATE_LIMIT_WAIT_SECONDS } from "../../http";
import {
  DEFAULT_BASE_URL,
  DEFAULT_MAX_CONCURRENCY,
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
} from "./constants";

export interface ValimailConfig {
  baseUrl: string;
  clientId: string;
  appId: string;
  slug: string;
  /** Writes are allowed only when CONNECTOR_PROVISIONING is exactly `true`. */
  provisioning: boolean;
  /** The raw value, to say why writes are refused. */
  provisioningSetting: string | undefined;
  maxConcurrency: number;
  /** Unset: learned from the upstream's answers; 0: no client-side ceiling; N: at most N. */
  requestsPerSecond: number | undefined;
  /** How long a request answered 429 keeps waiting, in seconds. */
  rateLimitWaitSeconds: number;
  pageSize: number;
  /** Response size, request timeout, pages per list, sync deadline, and their variables. */
  bounds: UpstreamBounds;
}

export const VALIMAIL_SECRET_VARIABLES = [
  "CONNECTOR_EMAILAUTH_CLIENT_ID",
  "CONNECTOR_EMAILAUTH_APP_ID",
] as const;

const HINTS = {
  CONNECTOR_EMAILAUTH_CLIENT_ID:
    "set it (or CONNECTOR_EMAILAUTH_CLIENT_ID_FILE) to the Client ID of a Configuration Only API key",
  CONNECTOR_EMAILAUTH_APP_ID:
    "set it (or CONNECTOR_EMAILAUTH_APP_ID_FILE) to the App ID of that key",
  CONNECTOR_EMAILAUTH_SLUG:
    "set it to the account slug: the part after /app/ in the address of your Valimail application",
  CONNECTOR_PROVISIONING: "optional",
  CONNECTOR_EMAILAUTH_BASE_URL: "optional",
  CONNECTOR_EMAILAUTH_MAX_CONCURRENCY: "optional",
  CONNECTOR_EMAILAUTH_REQUESTS_PER_SECOND: "optional",
  CONNECTOR_EMAILAUTH_RATE_LIMIT_WAIT_SECONDS: "optional",
  CONNECTOR_EMAILAUTH_PAGE_SIZE: "optional",
  CONNECTOR_EMAILAUTH_MAX_RESPONSE_MIB: "optional",
  CONNECTOR_EMAILAUTH_REQUEST_TIMEOUT: "optional",
  CONNECTOR_EMAILAUTH_MAX_PAGES_PER_LIST: "optional",
  CONNECTOR_EMAILAUTH_SYNC_DEADLINE: "optional",
} as const;

/** Assumption (UPSTREAM.md): the slug is one path segment, as in https://app.valimail.com/app/{slug}/. */
const SLUG = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

const slug = z.string().superRefine((value, ctx) => {
  const trimmed = value.trim();
  if (SLUG.test(trimmed)) return;
  const fromAddress = /\/app\/([^/?#\s]+)/.exec(trimmed)?.[1];
  ctx.addIssue({
    code: "custom",
    message: fromAddress
      ? `"${value}" is an address; set only the account slug, the segment after /app/ (here "${fromAddress}")`
      : /[:/.]/.test(trimmed)
        ? `"${value}" looks like an address; set only the account slug, the segment after /app/ in the address of your Valimail application`
        : `"${value}" is not an account slug; it has letters, digits, '-' and '_' only (the segment after /app/ in your Valimail address)`,
  });
});

const schema = z
  .object({
    CONNECTOR_EMAILAUTH_CLIENT_ID: z.string(),
    CONNECTOR_EMAILAUTH_APP_ID: z.string(),
    CONNECTOR_EMAILAUTH_SLUG: slug,
    CONNECTOR_PROVISIONING: z.string().optional(),
    CONNECTOR_EMAILAUTH_BASE_URL: baseUrl.optional(),
    CONNECTOR_EMAILAUTH_MAX_CONCURRENCY: integerSetting(1, 64).default(DEFAULT_MAX_CONCURRENCY),
    CONNECTOR_EMAILAUTH_REQUESTS_PER_SECOND: integerSetting(0, 1000).optional(),
    CONNECTOR_EMAILAUTH_RATE_LIMIT_WAIT_SECONDS: integerSetting(1, 86_400).default(
      DEFAULT_RATE_LIMIT_WAIT_SECONDS,
    ),
    CONNECTOR_EMAILAUTH_PAGE_SIZE: integerSetting(1, MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
    CONNECTOR_EMAILAUTH_MAX_RESPONSE_MIB: boundSettings.maxResponseMiB(),
    CONNECTOR_EMAILAUTH_REQUEST_TIMEOUT: boundSettings.requestTimeout(),
    CONNECTOR_EMAILAUTH_MAX_PAGES_PER_LIST: boundSettings.maxPagesPerList(),
    CONNECTOR_EMAILAUTH_SYNC_DEADLINE: boundSettings.syncDeadline(),
  })
  .transform(
    (v): ValimailConfig => ({
      baseUrl: v.CONNECTOR_EMAILAUTH_BASE_URL ?? DEFAULT_BASE_URL,
      clientId: v.CONNECTOR_EMAILAUTH_CLIENT_ID.trim(),
      appId: v.CONNECTOR_EMAILAUTH_APP_ID.trim(),
      slug: v.CONNECTOR_EMAILAUTH_SLUG.trim(),
      provisioning: v.CONNECTOR_PROVISIONING === "true",
      provisioningSetting: v.CONNECTOR_PROVISIONING,
      maxConcurrency: v.CONNECTOR_EMAILAUTH_MAX_CONCURRENCY,
      requestsPerSecond: v.CONNECTOR_EMAILAUTH_REQUESTS_PER_SECOND,
      rateLimitWaitSeconds: v.CONNECTOR_EMAILAUTH_RATE_LIMIT_WAIT_SECONDS,
      pageSize: v.CONNECTOR_EMAILAUTH_PAGE_SIZE,
      bounds: upstreamBounds("CONNECTOR_EMAILAUTH", {
        maxResponseMiB: v.CONNECTOR_EMAILAUTH_MAX_RESPONSE_MIB,
        requestTimeoutMs: v.CONNECTOR_EMAILAUTH_REQUEST_TIMEOUT,
        maxPagesPerList: v.CONNECTOR_EMAILAUTH_MAX_PAGES_PER_LIST,
        syncDeadlineMs: v.CONNECTOR_EMAILAUTH_SYNC_DEADLINE,
      }),
    }),
  );

/** Reads and validates the Valimail settings (CONTRACTS.md section 2). */
export function loadValimailConfig(env: Environment): ValimailConfig {
  return parseSettings(schema, resolveSecrets(env, VALIMAIL_SECRET_VARIABLES), HINTS);
}

/** Every variable the connector reads. */
export const VALIMAIL_VARIABLES: readonly string[] = Object.keys(HINTS);
