/**
 * The rate model of one upstream's limit (docs/rate-model.md): a plain, bounded, JSON state and
 * pure transitions with the clock passed in (`model.ts`), for any runtime; `RateModel` holds it.
 */
export * from "./constants";
export { accepted, nextStartAt, refused, start, unanswered, type Verdict } from "./model";
export { RateModel } from "./RateModel";
export {
  type HeaderSource,
  parseRateLimitState,
  parseRetryAfter,
  type RateLimitState,
  type Signal,
  signalOf,
} from "./signal";
export { newRateState, type RateSettings, type RateState, type Ticket } from "./state";
