/** The rate model's constants, each with its unit (docs/rate-model.md, "Constants"). */

/** Requests per second before anything is known. */
export const START_RATE = 20;
/** The pace held under the estimate, a share of it: room for arrival jitter. */
export const HEADROOM = 0.98;
/** Startup doubles the pace this often (ms) while nothing is refused. */
export const DOUBLING_MS = WINDOW_MS / 2;
/**
 * Starts and accepted answers are counted over this window (ms); after a cut the pace holds this
 * long (doubled per probe refused) before it probes: a window measured at the new pace.
 */
export const WINDOW_MS = 1000;
/** The rate since a cut needs this many accepted answers (and is taken over twice as many). */
export const ESTIMATE_ANSWERS = 8;
/** After a cut the pace stands this long (ms), then regains the estimate by x2 a second. */
export const REGROW_AFTER_MS = 250;
/** Probing: the pace is the plateau x (1 + this x t³), t seconds since the hold ended (1/s³). */
export const PROBE_GAIN = 0.002;
/**
 * A `Retry-After` (or a `RateLimit-Reset` with nothing remaining) of two windows or more (ms)
 * holds every start: a window's own wait is at most one.
 */
export const BLOCKING_MS = 2 * WINDOW_MS;
/** A block's first probe (ms) after its start; later ones after a tenth of its age, at least this. */
export const FIRST_PROBE_MS = 200;
/** Probes of a block are at most this far apart (ms). */
export const MAX_PROBE_MS = 120_000;
/** Refusals in a row (requests) that make a block. */
export const BLOCK_AFTER_REFUSALS = 4;
/** A cap on requests in flight needs this many answers accepted below the level refused. */
export const CAP_EVIDENCE = ESTIMATE_ANSWERS;
/**
 * A `RateLimit-Limit` (requests) per window of at most this long (ms) is a rate; longer, an
 * allowance. The longest span the logs keep (the levels a cap is learned from, a header's starts).
 */
export const HEADER_WINDOW_MAX_MS = 10_000;
/** Entries kept in each of the state's logs (starts, accepted answers, levels): its size bound. */
export const LOG_LIMIT = 1000;
/**
 * Arrival skew (ms): a start may go this much before the pace's time (a late timer is not a lost
 * start), and a start is counted in a window this much longer (it may arrive that much later).
 */
export const SKEW_MS = 5;
