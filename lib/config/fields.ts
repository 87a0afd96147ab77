import { z } from "zod";

const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(["127.0.0.1", "[::1]", "localhost"]);

/** A base address: `https://`, or `http://` on a loopback host (the simulators). */
export const baseUrl = z.string().transform((value, ctx) => {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    ctx.addIssue({
      code: "custom",
      message: `"${value}" is not an address; give one like https://host.example.com`,
    });
    return z.NEVER;
  }
  const loopback = LOOPBACK_HOSTS.has(url.hostname.toLowerCase());
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) {
    ctx.addIssue({
      code: "custom",
      message: `must start with https:// (http:// is allowed only for 127.0.0.1, [::1] and localhost), got ${url.protocol}//`,
    });
    return z.NEVER;
  }
  if (url.username || url.password || url.search || url.hash) {
    ctx.addIssue({
      code: "custom",
      message:
        "must not contain credentials, a query or a fragment; give scheme, host and optional path only",
    });
    return z.NEVER;
  }
  return url.toString().replace(/\/+$/, "");
});

/** A whole number from an environment variable, within bounds. */
export function integerSetting(min: number, max: number) {
  return z
    .string()
    .trim()
    .regex(/^\d+$/, `must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
}

/** One DNS label: letters, digits and inner hyphens, at most 63 characters. */
export const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
