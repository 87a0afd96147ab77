import { isIP } from "node:net";
import * as z from "zod";
import { type Environment, integerSetting, parseSettings, type SettingMeta } from "../config";

/** Where the service's monitoring endpoint listens (docs/service.md, Monitoring endpoint). */
export interface HttpSettings {
  host: string;
  /** 0: any free port (the one taken is logged). */
  port: number;
}

export const HTTP_VARIABLES = {
  port: "CONNECTOR_HTTP_PORT",
  host: "CONNECTOR_HTTP_HOST",
} as const;

/** This host only, unless the operator says otherwise (the image says 0.0.0.0). */
export const DEFAULT_HTTP_HOST = "127.0.0.1";

const HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

const host = z
  .string()
  .trim()
  .transform((value) => value.replace(/^\[(.*)\]$/, "$1"))
  .refine(
    (value) => isIP(value) !== 0 || HOST_NAME.test(value),
    "is not an address to listen on; give an IP address (0.0.0.0 for every interface, 127.0.0.1 for this host only) or a host name, without a scheme or a port",
  );

/** The monitoring endpoint's variables, keyed by name, with their docs. */
export const httpSettingsSchema = z
  .object({
    [HTTP_VARIABLES.port]: integerSetting(0, 65_535)
      .optional()
      .meta({
        defaultText: "unset (no listener); the image sets 9090",
        description:
          "The port of `/livez`, `/readyz`, `/metrics` and `/status` (docs/service.md); 0 takes any free one.",
      } satisfies SettingMeta),
    [HTTP_VARIABLES.host]: host.default(DEFAULT_HTTP_HOST).meta({
      type: "IP address or host name",
      description: "The address that port listens on; the image sets `0.0.0.0`.",
    } satisfies SettingMeta),
  })
  .transform((v): HttpSettings | undefined =>
    v.CONNECTOR_HTTP_PORT === undefined
      ? undefined
      : { host: v.CONNECTOR_HTTP_HOST, port: v.CONNECTOR_HTTP_PORT },
  );

const HINTS = {
  [HTTP_VARIABLES.port]: "optional",
  [HTTP_VARIABLES.host]: "optional",
} as const;

/**
 * CONNECTOR_HTTP_PORT and CONNECTOR_HTTP_HOST: undefined when the port is unset (no listener).
 * Throws `ConfigError` naming the variable (a port that is not 0-65535, a host with a scheme).
 */
export function loadHttpSettings(env: Environment): HttpSettings | undefined {
  return parseSettings(httpSettingsSchema, env, HINTS);
}

/** The address a client on this host uses for `settings` (an any-address listener included). */
export function localUrlOf(settings: HttpSettings): string {
  const any = settings.host === "0.0.0.0" || settings.host === "::";
  const host = any ? DEFAULT_HTTP_HOST : settings.host;
  return `http://${isIP(host) === 6 ? `[${host}]` : host}:${settings.port}`;
}
