/**
 * The `limiter` fault setting: which upstream rate limiter the simulator runs, and how it says
 * no. Parsed with zod wherever it comes from outside (a test, the bench's simulator host, JSON);
 * see README.md beside the simulators for what each kind does.
 */
import * as z from "zod";
import { LimiterSettingsError } from "./errors";

/** How a 429 tells the client when to come back: whole seconds, an HTTP date, or not at all. */
const retryAfter = z.enum(["seconds", "date", "none"]).default("seconds");
/**
 * The limiter's state on every answer (accepted and refused): `RateLimit-Limit`, `-Remaining`,
 * `-Reset` (IETF draft), or the same names with the `X-RateLimit-` prefix (GitHub's, Envoy's).
 */
const headers = z.enum(["ratelimit", "x-ratelimit"]).optional();
const positiveInt = z.number().int().positive();

export const limiterSettingsSchema = z.discriminatedUnion("kind", [
  /** `limiter`'s TokenBucket: `burst` tokens at most, refilled at `ratePerSecond`; starts full. */
  z.strictObject({
    kind: z.literal("token_bucket"),
    ratePerSecond: z.number().positive(),
    burst: positiveInt,
    retryAfter,
    headers,
  }),
  /**
   * `rate-limiter-flexible`'s RateLimiterMemory: `limit` requests per window of `windowSeconds`.
   * `opensAt`: the first window opens at the first request, or at the limiter's start (a server
   * already running, or a limit shared with other clients: the client meets a window part spent
   * in time, at any phase).
   */
  z.strictObject({
    kind: z.literal("fixed_window"),
    limit: positiveInt,
    windowSeconds: positiveInt,
    opensAt: z.enum(["first_request", "start"]).default("first_request"),
    retryAfter,
    headers,
  }),
  /** `rolling-rate-limiter`'s InMemoryRateLimiter: at most `limit` in any `windowSeconds`. */
  z.strictObject({
    kind: z.literal("sliding_log"),
    limit: positiveInt,
    windowSeconds: z.number().positive(),
    retryAfter,
    headers,
  }),
  /** At most `maxInFlight` requests being served at once (nginx `limit_conn`). */
  z.strictObject({
    kind: z.literal("in_flight"),
    maxInFlight: positiveInt,
    retryAfter,
    headers,
  }),
]);

/** A limiter setting as written (defaults may be left out). */
export type LimiterSettings = z.input<typeof limiterSettingsSchema>;
/** A limiter setting with its defaults filled in. */
export type ParsedLimiterSettings = z.output<typeof limiterSettingsSchema>;

/** The setting, parsed; a `LimiterSettingsError` naming each field at fault otherwise. */
export function parseLimiterSettings(input: unknown, field = "limiter"): ParsedLimiterSettings {
  const parsed = limiterSettingsSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const path = [field, ...issue.path.map(String)].join(".");
    return `${path}: ${issue.message}`;
  });
  throw new LimiterSettingsError(
    `${problems.join("; ")} (kinds: token_bucket {ratePerSecond, burst}, fixed_window {limit, windowSeconds, opensAt "first_request" | "start"}, sliding_log {limit, windowSeconds}, in_flight {maxInFlight}; each with retryAfter "seconds" | "date" | "none" and headers "ratelimit" | "x-ratelimit")`,
  );
}
