/**
 * Every tuned number of the rate model, with its unit; the reasons are docs/rate-model.md's
 * "Constants". The rest are halves, doubles and unit conversions.
 */

/** Requests per second before anything is known. */
export const START_RATE = 20;
/** The pace held under the estimate, a share of it: room for arrival jitter. */
export const HEADROOM = 0.98;
/** Starts and accepted answers are counted over this window (ms); the plateau's hold. */
export const WINDOW_MS = 1000;
/** Startup doubles the pace this often (ms) while nothing is refused. */
export const DOUBLING_MS = 400;
/** The fewest accepted answers that tell: a rate since a cut, a judgment, a cap (answers). */
export const ESTIMATE_ANSWERS = 8;
/** The pace stands this long after a cut (ms), and a rate is counted over this at least. */
export const SETTLE_MS = 250;
/** Probing: the pace is the plateau x (1 + this x t³), t seconds since the hold ended (1/s³). */
export const PROBE_GAIN = 0.002;
/** Arrival skew (ms): a start is counted in a window this much longer (it may arrive that late). */
export const SKEW_MS = 5;
/** A block's first probe (ms) after its start, and the least between its probes. */
export const FIRST_PROBE_MS = 200;
/** The most between a block's probes, and the longest hold before a probe above the estimate (ms). */
export const MAX_PROBE_MS = 120_000;
/** A `Retry-After` (or `Reset` with nothing remaining) this long (ms) holds every start. */
export const BLOCKING_MS = 2 * WINDOW_MS;
/** Refusals in a row (requests) that make a block: a window spent, a quota. */
export const BLOCK_AFTER_REFUSALS = 4;
/** In startup, a cap may be learned from one refusal at this level in flight or under. */
export const STARTUP_CAP_LEVEL = 4;
/** Cuts that lowered the estimate by this share of it or more are judged as noise or not. */
export const LARGE_CUT = 0.1;
/** A `RateLimit-Limit` window up to this long (ms) is a rate, not an allowance; the logs' span. */
export const HEADER_WINDOW_MAX_MS = 10_000;
/** Entries kept in each of the state's logs (starts, accepted answers, levels): its size bound. */
export const LOG_LIMIT = 1000;
