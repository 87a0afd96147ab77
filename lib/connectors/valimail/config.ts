import * as z from "zod";
import {
  baseUrl,
  type Environment,
  parseSettings,
  resolveSecrets,
  type SettingMeta,
} from "../../config";
import { type UpstreamTuning, upstreamTuning } from "../upstreamTuning";
import {
  DEFAULT_BASE_URL,
  DEFAULT_MAX_CONCURRENCY,
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
} from "./constants";

export interface ValimailConfig extends UpstreamTuning {
  baseUrl: string;
  clientId: string;
  appId: string;
  slug: string;
  /** Writes are allowed only when CONNECTOR_PROVISIONING is exactly `true`. */
  provisioning: boolean;
  /** The raw value, to say why writes are refused. */
  provisioningSetting: string | undefined;
}

export const VALIMAIL_SECRET_VARIABLES = [
  "CONNECTOR_EMAILAUTH_CLIENT_ID",
  "CONNECTOR_EMAILAUTH_APP_ID",
] as const;

const TUNING = upstreamTuning("CONNECTOR_EMAILAUTH", {
  maxConcurrency: DEFAULT_MAX_CONCURRENCY,
  pageSize: DEFAULT_PAGE_SIZE,
  maxPageSize: MAX_PAGE_SIZE,
});

const HINTS = {
  CONNECTOR_EMAILAUTH_CLIENT_ID:
    "set it (or CONNECTOR_EMAILAUTH_CLIENT_ID_FILE) to the Client ID of a Configuration Only API key",
  CONNECTOR_EMAILAUTH_APP_ID:
    "set it (or CONNECTOR_EMAILAUTH_APP_ID_FILE) to the App ID of that key",
  CONNECTOR_EMAILAUTH_SLUG:
    "set it to the account slug: the part after /app/ in the address of your Valimail application",
  CONNECTOR_PROVISIONING: "optional",
  CONNECTOR_EMAILAUTH_BASE_URL: "optional",
  ...TUNING.hints,
} as const;

/** Assumption (docs/upstream.md): the slug is one path segment, as in https://app.valimail.com/app/{slug}/. */
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

/** The Valimail variables, keyed by name: the one source of their checks and their docs. */
export const valimailSettings = z
  .object({
    CONNECTOR_EMAILAUTH_CLIENT_ID: z
      .string()
      .describe("Client ID of a Configuration Only API key in Valimail."),
    CONNECTOR_EMAILAUTH_APP_ID: z.string().describe("App ID of that key."),
    CONNECTOR_EMAILAUTH_SLUG: slug.meta({
      type: "account slug",
      description:
        "The account slug: the path segment after `/app/` in your Valimail address (`acme` in https://app.valimail.com/app/acme/...).",
    } satisfies SettingMeta),
    CONNECTOR_PROVISIONING: z
      .string()
      .optional()
      .meta({
        type: "`true` or anything else",
        defaultText: "unset (writes refused)",
        description:
          "Exactly `true` allows writes (docs/actions.md); unset or any other value refuses them with `provisioning_disabled`.",
      } satisfies SettingMeta),
    CONNECTOR_EMAILAUTH_BASE_URL: baseUrl.optional().meta({
      defaultText: `\`${DEFAULT_BASE_URL}\``,
      description: "Replaces Valimail's API address.",
    } satisfies SettingMeta),
    ...TUNING.fields,
  })
  .transform(
    (v): ValimailConfig => ({
      baseUrl: v.CONNECTOR_EMAILAUTH_BASE_URL ?? DEFAULT_BASE_URL,
      clientId: v.CONNECTOR_EMAILAUTH_CLIENT_ID.trim(),
      appId: v.CONNECTOR_EMAILAUTH_APP_ID.trim(),
      slug: v.CONNECTOR_EMAILAUTH_SLUG.trim(),
      provisioning: v.CONNECTOR_PROVISIONING === "true",
      provisioningSetting: v.CONNECTOR_PROVISIONING,
      ...TUNING.read(v),
    }),
  );

/** Reads and validates the Valimail settings (docs/configuration.md). */
export function loadValimailConfig(env: Environment): ValimailConfig {
  return parseSettings(valimailSettings, resolveSecrets(env, VALIMAIL_SECRET_VARIABLES), HINTS);
}

/** Every variable the connector reads. */
export const VALIMAIL_VARIABLES: readonly string[] = Object.keys(HINTS);
