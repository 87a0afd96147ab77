/**
 * The rate controller's state (docs/rate-model.md, "State"): one object that `AdaptiveRate` owns
 * and its decisions (`episodeDecisions.ts`, `blockDecisions.ts`, `headerDecisions.ts`) take, with
 * the two moves many of them make: where the plateau is, and a cut of the pace.
 */
import { Block } from "./Block";
import type { Episode } from "./episode";
import type { HeaderLimit } from "./headerLimit";
import { InFlightCap } from "./inFlightCap";
import { RefusalNoise } from "./RefusalNoise";
import { EDGE_SHARE, MIN_RATE, START_RATE } from "./rateConstants";
import type { AdaptiveRateSettings } from "./rateTypes";
import { StartLog } from "./StartLog";

export interface RateState {
  /** The configured rate, a hard ceiling on the pace (`Infinity`: none). */
  readonly ceiling: number;
  /** The pace in requests per second (`Infinity`: not paced). */
  rate: number;
  slowStart: boolean;
  /** The learned edge (`Infinity` until a 429 or a header says). */
  maxRate: number;
  /** When the pace was last cut, and since when it has stood at the plateau. */
  cutAt: number;
  plateauFrom: number;
  /** Probes above the edge refused since it was learned: each doubles the plateau before the next. */
  failedProbes: number;
  /** When the last probe was refused, and the 429s it cost (`PROBE_REFUSAL_SHARE`). */
  probeFailedAt: number;
  probeCost: number;
  lastUpdate: number | undefined;
  /** The pace's theoretical next start (GCRA). */
  nextStartAt: number;
  readonly log: StartLog;
  episode: Episode | undefined;
  lastRefusal: number;
  readonly noise: RefusalNoise;
  readonly inFlight: InFlightCap;
  readonly block: Block;
  headerLimit: HeaderLimit | undefined;
  /** Slow start's exit cut, deferred while a cap learned there is on trial. */
  trialCut: number | undefined;
  /** A `Limit` shown not to be a rate (more accepted within its window): never taken as one. */
  headerDisproved: number | undefined;
  /**
   * When a fixed window would have begun at the latest (`Block.guessWindowEnd`): the first
   * accepted answer, then each block's accepted probe's.
   */
  windowFrom: number | undefined;
}

/** Nothing learned yet: slow start from `START_RATE`, or from the configured rate. */
export function newRateState(settings: AdaptiveRateSettings): RateState {
  const configured = settings.requestsPerSecond;
  return {
    ceiling: configured === undefined || configured <= 0 ? Number.POSITIVE_INFINITY : configured,
    rate:
      configured === undefined
        ? START_RATE
        : configured <= 0
          ? Number.POSITIVE_INFINITY
          : configured,
    slowStart: true,
    maxRate: Number.POSITIVE_INFINITY,
    cutAt: Number.NEGATIVE_INFINITY,
    plateauFrom: 0,
    failedProbes: 0,
    probeFailedAt: Number.NEGATIVE_INFINITY,
    probeCost: 0,
    lastUpdate: undefined,
    nextStartAt: Number.NEGATIVE_INFINITY,
    log: new StartLog(),
    episode: undefined,
    lastRefusal: Number.NEGATIVE_INFINITY,
    noise: new RefusalNoise(),
    inFlight: new InFlightCap(),
    block: new Block(),
    headerLimit: undefined,
    trialCut: undefined,
    headerDisproved: undefined,
    windowFrom: undefined,
  };
}

/** Where the pace holds below the edge: `EDGE_SHARE` of it. */
export function plateau(s: RateState): number {
  return EDGE_SHARE * s.maxRate;
}

/** The pace to `rate` (within `MIN_RATE` and the ceiling), standing from `now`. */
export function cut(s: RateState, now: number, rate: number): void {
  s.rate = Math.min(s.ceiling, Math.max(MIN_RATE, rate));
  s.cutAt = now;
  s.plateauFrom = now;
  s.lastUpdate = now;
}
