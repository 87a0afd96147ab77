/**
 * The simulators' upstream rate limiters (the `limiter` fault setting), each backed by a
 * server-side rate-limit library nobody here wrote. Loaded by `httpServer.ts` only when a
 * simulator is given a `limiter`, so the command line's demo does not load these libraries.
 */
import { decisionHeaders, type LimiterKind } from "./decision";
import { fixedWindow } from "./fixedWindow";
import { inFlight } from "./inFlight";
import { type ParsedLimiterSettings, parseLimiterSettings } from "./settings";
import { slidingLog } from "./slidingLog";
import { tokenBucket } from "./tokenBucket";

export interface Admission {
  accepted: boolean;
  /** The limiter's state (when asked for), and `Retry-After` on a refusal. */
  headers: Record<string, string>;
}

export interface UpstreamLimiter {
  readonly settings: ParsedLimiterSettings;
  /** Whether to serve this request; decided in the order of calls. */
  admit(): Promise<Admission>;
  /** For an accepted request, once its answer has been sent. */
  release(): void;
  close(): void;
}

function kindOf(settings: ParsedLimiterSettings): LimiterKind {
  switch (settings.kind) {
    case "token_bucket":
      return tokenBucket(settings);
    case "fixed_window":
      return fixedWindow(settings);
    case "sliding_log":
      return slidingLog(settings);
    case "in_flight":
      return inFlight(settings);
  }
}

/** A limiter for `input` (parsed here: a `LimiterSettingsError` names what is wrong). */
export function createLimiter(input: unknown): UpstreamLimiter {
  const settings = parseLimiterSettings(input);
  const kind = kindOf(settings);
  return {
    settings,
    async admit() {
      const decision = await kind.decide();
      return { accepted: decision.accepted, headers: decisionHeaders(settings, decision) };
    },
    release: () => kind.release(),
    close: () => kind.close(),
  };
}

export { LimiterSettingsError } from "./errors";
export type { LimiterSettings } from "./settings";
