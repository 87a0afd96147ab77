import type { Logger } from "../logging";

/**
 * What the cloud runtime's library code reports through: a logger (Powertools Logger in the
 * functions, with the correlation ids appended) and a metric sink (Powertools Metrics). Kept to
 * this small surface so `lib/cloud` runs the same under a test or a handler.
 */
export interface Telemetry {
  logger: Logger;
  /** Adds to a count metric, e.g. `records` or `throttles`. */
  count(name: string, value: number): void;
  /** Records a duration metric in milliseconds, e.g. `runDuration`. */
  duration(name: string, ms: number): void;
}

export function silentTelemetry(logger: Logger): Telemetry {
  return { logger, count: () => {}, duration: () => {} };
}
