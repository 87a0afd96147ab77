/**
 * The rate model's constants, each with its unit and reason (docs/rate-model.md, "Constants"):
 * every tuned number of the model is here, the rest are halves, doubles and unit conversions.
 */

/** Requests per second before anything is known. */
export const START_RATE = 20;
/** The pace held under the estimate, a share of it: room for arrival jitter. */
export const HEADROOM = 0.98;
/**
 * Starts and accepted answers are counted over this window (ms); after a cut the pace holds this
 * long (doubled per probe refused) before it probes: a window measured at the new pace.
 */
export const WINDOW_MS = 1000;
/** Startup doubles the pace this often (ms) while nothing is refused. */
export const DOUBLING_MS = 400;
/**
 * The fewest accepted answers that tell something (answers): a rate since a cut (taken over twice
 * as many), a judgment of cuts, a cap (accepted below the level refused).
 */
export const ESTIMATE_ANSWERS = 8;
/**
 * The shortest span the model waits or measures over (ms): after a cut the pace stands this long
 * (the answers in flight still come back), and a rate is counted over this at least.
 */
export const SETTLE_MS = 250;
/** Probing: the pace is the plateau x (1 + this x t³), t seconds since the hold ended (1/s³). */
export const PROBE_GAIN = 0.002;
/** Arrival skew (ms): a start is counted in a window this much longer (it may arrive that late). */
export const SKEW_MS = 5;
/** A block's first probe (ms) after its start, and the least between its probes. */
export const FIRST_PROBE_MS = 200;
/** The most between a block's probes, and the longest hold before a probe above the estimate (ms). */
export const MAX_PROBE_MS = 120_000;
/**
 * A `Retry-After` (or a `RateLimit-Reset` with nothing remaining) of two windows or more (ms)
 * holds every start: a window's own wait is at most one.
 */
export const BLOCKING_MS = 2 * WINDOW_MS;
/** Refusals in a row (requests) that make a block: a window spent, a quota. */
export const BLOCK_AFTER_REFUSALS = 4;
/**
 * In startup, a cap may be learned from one refusal at this level in flight or under (requests):
 * above, every limit refuses startup's overshoot at the run's highest levels.
 */
export const STARTUP_CAP_LEVEL = 4;
/**
 * A share of the estimate (fraction): cuts that lowered it by this much or more are judged
 * (rule 7); smaller ones do not change a limit's share of refusals.
 */
export const LARGE_CUT = 0.1;
/**
 * A `RateLimit-Limit` (requests) per window of at most this long (ms) is a rate; longer, an
 * allowance. The longest span the logs keep (the levels a cap is learned from, a header's starts).
 */
export const HEADER_WINDOW_MAX_MS = 10_000;
/** Entries kept in each of the state's logs (starts, accepted answers, levels): its size bound. */
export const LOG_LIMIT = 1000;
