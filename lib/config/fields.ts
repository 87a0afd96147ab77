import * as z from "zod";

const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(["127.0.0.1", "[::1]", "localhost"]);

/**
 * What docs/configuration.md says of a setting, registered with its schema (`.describe()` or
 * `.meta()`): its meaning, its `type` in words, `defaultText` where the schema has no default of
 * its own (as Markdown), the `unit` of a number shown as a duration. `npm run docs` reads them.
 */
export type SettingMeta = {
  description?: string;
  type?: string;
  defaultText?: string;
  unit?: "ms";
};

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
z.globalRegistry.add(baseUrl, {
  type: "`https://` address (`http://` on a loopback host)",
} satisfies SettingMeta);

/** A whole number from an environment variable, within bounds. */
export function integerSetting(min: number, max: number) {
  return z
    .string()
    .trim()
    .regex(/^\d+$/, `must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .meta({ type: `whole number, ${min} to ${max}` } satisfies SettingMeta);
}

/** One DNS label: letters, digits and inner hyphens, at most 63 characters. */
export const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const DURATION = /^(\d+)\s*(ms|[smh]?)$/i;
const DURATION_UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  "": 1_000,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * A duration as people write it, in milliseconds: a whole number of seconds, or a whole number
 * followed by `ms`, `s`, `m` or `h`; undefined when the text is none of these.
 */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  return Number(match[1]) * (DURATION_UNIT_MS[(match[2] ?? "").toLowerCase()] ?? 1_000);
}

/** A duration as people write it: `90s`, `30m`, `6h`, `500ms`, or seconds. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1_000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/**
 * A duration from an environment variable: a whole number of seconds, or a whole number followed
 * by `ms`, `s`, `m` or `h` (`90s`, `30m`, `6h`), within bounds. Yields milliseconds.
 */
export function durationSetting(minMs: number, maxMs: number) {
  const range = `from ${formatDuration(minMs)} to ${formatDuration(maxMs)}`;
  const meta: SettingMeta = {
    type: `duration, ${formatDuration(minMs)} to ${formatDuration(maxMs)}`,
    unit: "ms",
  };
  const schema = z.string().transform((value, ctx) => {
    const ms = parseDuration(value);
    if (ms === undefined) {
      ctx.addIssue({
        code: "custom",
        message: `"${value}" is not a duration; write a whole number of seconds, or a whole number followed by ms, s, m or h (e.g. 90s, 30m, 6h), ${range}`,
      });
      return z.NEVER;
    }
    if (ms < minMs || ms > maxMs) {
      ctx.addIssue({
        code: "custom",
        message: `"${value}" is ${ms < minMs ? "too short" : "too long"}; give a duration ${range}`,
      });
      return z.NEVER;
    }
    return ms;
  });
  return schema.meta(meta);
}
