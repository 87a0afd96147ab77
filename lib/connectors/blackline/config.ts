import * as z from "zod";
import {
  baseUrl,
  CREDENTIALS_ISSUE,
  DNS_LABEL,
  type Environment,
  parseSettings,
  resolveSecrets,
  type SettingMeta,
  UUID,
} from "../../config";
import { type UpstreamTuning, upstreamTuning } from "../upstreamTuning";
import {
  baseUrlFor,
  CLIENT_AUTH_METHODS,
  type ClientAuthMethod,
  DEFAULT_CLIENT_AUTH,
  DEFAULT_MAX_CONCURRENCY,
  DEFAULT_PAGE_SIZE,
  INVALID_INSTANCE_GUID,
  MAX_PAGE_SIZE,
} from "./constants";

export interface BlacklineConfig extends UpstreamTuning {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** How the client pair is sent to the token endpoint: form body or HTTP Basic. */
  clientAuth: ClientAuthMethod;
  username: string;
  apiKey: string;
  scope: string;
}

export const BLACKLINE_SECRET_VARIABLES = [
  "CONNECTOR_ACCOUNTING_CLIENT_SECRET",
  "CONNECTOR_ACCOUNTING_API_KEY",
] as const;

const TUNING = upstreamTuning("CONNECTOR_ACCOUNTING", {
  maxConcurrency: DEFAULT_MAX_CONCURRENCY,
  pageSize: DEFAULT_PAGE_SIZE,
  maxPageSize: MAX_PAGE_SIZE,
});

/** Where each value comes from, shown when it is missing; also the list of variables read. */
const HINTS = {
  CONNECTOR_ACCOUNTING_CLIENT_ID: "set it to the Client ID of the API client in BlackLine",
  CONNECTOR_ACCOUNTING_CLIENT_SECRET:
    "set it (or CONNECTOR_ACCOUNTING_CLIENT_SECRET_FILE) to that client's secret",
  CONNECTOR_ACCOUNTING_ENVIRONMENT:
    "set it to your environment subdomain, e.g. us, us2, eu, sbeu (or set CONNECTOR_ACCOUNTING_BASE_URL)",
  CONNECTOR_ACCOUNTING_USERNAME: "set it to the BlackLine username the API key belongs to",
  CONNECTOR_ACCOUNTING_API_KEY:
    "set it (or CONNECTOR_ACCOUNTING_API_KEY_FILE) to that user's API key",
  CONNECTOR_ACCOUNTING_SCOPE:
    "set it to the API scope names plus exactly one instance_<GUID> token",
  CONNECTOR_ACCOUNTING_CLIENT_AUTH: "optional",
  CONNECTOR_ACCOUNTING_BASE_URL: "optional",
  ...TUNING.hints,
} as const;

const environmentLabel = z.string().superRefine((value, ctx) => {
  if (DNS_LABEL.test(value)) return;
  const pastedHost = /^(?:https?:\/\/)?([a-z0-9-]+)\.api\.blackline\.com/i.exec(value.trim());
  const message = pastedHost
    ? `"${value}" is an address; set only its first label, "${pastedHost[1]}" (or put the whole address in CONNECTOR_ACCOUNTING_BASE_URL)`
    : /[:/.]/.test(value)
      ? `"${value}" looks like an address; set only the environment subdomain, one label such as us, us2, eu or sbeu`
      : `"${value}" is not a single DNS label; the environment is the region subdomain of https://{environment}.api.blackline.com (such as us, us2, eu or sbeu), not the company or instance name`;
  ctx.addIssue({ code: "custom", message });
});

const scope = z.string().superRefine((value, ctx) => {
  const instances = value.split(/\s+/).filter((token) => /^instance_/i.test(token));
  if (instances.length === 0) {
    ctx.addIssue({
      code: "custom",
      params: CREDENTIALS_ISSUE,
      message: `BlackLine would answer invalid_grant: ${INVALID_INSTANCE_GUID}. The scope has no instance token; it must contain the API scope names plus exactly one instance_<GUID>, e.g. "DataIngestionAPI instance_3f2504e0-4f89-11d3-9a0c-0305e82c3301"`,
    });
  } else if (instances.length > 1) {
    ctx.addIssue({
      code: "custom",
      message: `has ${instances.length} instance_ tokens (${instances.join(", ")}); keep exactly one, the instance this connector reads`,
    });
  } else {
    const guid = (instances[0] as string).slice("instance_".length);
    if (!UUID.test(guid)) {
      ctx.addIssue({
        code: "custom",
        message: `"${instances[0]}" does not end in a GUID; write it as instance_ followed by the instance GUID, e.g. instance_3f2504e0-4f89-11d3-9a0c-0305e82c3301`,
      });
    }
  }
});

const clientAuth = z.string().transform((value, ctx): ClientAuthMethod => {
  const method = CLIENT_AUTH_METHODS.find((m) => m === value.trim().toLowerCase());
  if (method) return method;
  ctx.addIssue({
    code: "custom",
    message: `"${value}" is not a client authentication method; use body (client_id and client_secret in the form) or basic (HTTP Basic)`,
  });
  return z.NEVER;
});

/** The BlackLine variables, keyed by name: the one source of their checks and their docs. */
export const blacklineSettings = z
  .object({
    CONNECTOR_ACCOUNTING_CLIENT_ID: z
      .string()
      .describe("Client ID of the API client in BlackLine."),
    CONNECTOR_ACCOUNTING_CLIENT_SECRET: z.string().describe("That client's Client Secret."),
    CONNECTOR_ACCOUNTING_CLIENT_AUTH: clientAuth.optional().meta({
      type: "`body` or `basic`",
      defaultText: `\`${DEFAULT_CLIENT_AUTH}\``,
      description:
        "How the client pair reaches the token endpoint: `body` (`client_id` and `client_secret` in the form, BlackLine's documented way) or `basic` (HTTP Basic, RFC 6749 2.3.1).",
    } satisfies SettingMeta),
    CONNECTOR_ACCOUNTING_ENVIRONMENT: environmentLabel.optional().meta({
      type: "one DNS label",
      defaultText: "required, unless `CONNECTOR_ACCOUNTING_BASE_URL` is set",
      description:
        "Environment subdomain: the region label of `https://{environment}.api.blackline.com`, such as `us`, `us2`, `eu`, `sbeu`; not the company name, not an address.",
    } satisfies SettingMeta),
    CONNECTOR_ACCOUNTING_USERNAME: z
      .string()
      .describe("The BlackLine user the API key belongs to."),
    CONNECTOR_ACCOUNTING_API_KEY: z
      .string()
      .describe("That user's API key (the password grant's password)."),
    CONNECTOR_ACCOUNTING_SCOPE: scope.meta({
      type: "scope names and one `instance_<GUID>`",
      description:
        "The API scope names plus exactly one `instance_<GUID>` token, e.g. `DataIngestionAPI instance_3f2504e0-4f89-11d3-9a0c-0305e82c3301`; without the instance token BlackLine answers `invalid_grant` (exit 3).",
    } satisfies SettingMeta),
    CONNECTOR_ACCOUNTING_BASE_URL: baseUrl
      .optional()
      .describe("Replaces `https://{environment}.api.blackline.com` (a proxy, the simulator)."),
    ...TUNING.fields,
  })
  .refine((v) => Boolean(v.CONNECTOR_ACCOUNTING_ENVIRONMENT || v.CONNECTOR_ACCOUNTING_BASE_URL), {
    path: ["CONNECTOR_ACCOUNTING_ENVIRONMENT"],
    // Checked even when other fields fail, so that every mistake is reported at once.
    when: () => true,
  })
  .transform(
    (v): BlacklineConfig => ({
      baseUrl:
        v.CONNECTOR_ACCOUNTING_BASE_URL ?? baseUrlFor(v.CONNECTOR_ACCOUNTING_ENVIRONMENT ?? ""),
      clientId: v.CONNECTOR_ACCOUNTING_CLIENT_ID,
      clientSecret: v.CONNECTOR_ACCOUNTING_CLIENT_SECRET,
      clientAuth: v.CONNECTOR_ACCOUNTING_CLIENT_AUTH ?? DEFAULT_CLIENT_AUTH,
      username: v.CONNECTOR_ACCOUNTING_USERNAME,
      apiKey: v.CONNECTOR_ACCOUNTING_API_KEY,
      scope: v.CONNECTOR_ACCOUNTING_SCOPE.trim().split(/\s+/).join(" "),
      ...TUNING.read(v),
    }),
  );

/** Reads and validates the BlackLine settings (docs/configuration.md). */
export function loadBlacklineConfig(env: Environment): BlacklineConfig {
  return parseSettings(blacklineSettings, resolveSecrets(env, BLACKLINE_SECRET_VARIABLES), HINTS);
}

/** Every variable the connector reads. */
export const BLACKLINE_VARIABLES: readonly string[] = Object.keys(HINTS);
