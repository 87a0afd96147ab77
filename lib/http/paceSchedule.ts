/**
 * The rate controller's schedules in time (docs/rate-model.md, rules 6 to 8 and 22): how the pace
 * grows on good answers, and how far apart a block's probes go.
 */
import {
  CUBIC_SCALE,
  EARLY_PROBE_MAX_MS,
  EARLY_PROBE_SHARE,
  EDGE_SHARE,
  FIRST_PROBE_MS,
  MAX_PROBE_BACKOFF,
  MAX_PROBE_INTERVAL_MS,
  PLATEAU_MS,
  PROBE_REFUSAL_SHARE,
  PROBE_SHARE_OF_BLOCK,
  REGROW_AFTER_MS,
  REGROW_GAIN,
  SLOW_START_DOUBLING_MS,
} from "./rateConstants";

/** What the pace's growth depends on besides the pace itself. */
export interface GrowthState {
  slowStart: boolean;
  maxRate: number;
  cutAt: number;
  plateauFrom: number;
  failedProbes: number;
  /** 429s the last failed probe cost: its own and those of the requests then in flight. */
  probeCost: number;
}

/**
 * The pace after good answers from `last` to `now`, before any cap: slow start doubles; later it
 * regains the edge, holds, then probes above along a cubic.
 */
export function grownPace(rate: number, now: number, last: number, s: GrowthState): number {
  if (s.slowStart) return rate * 2 ** ((now - last) / SLOW_START_DOUBLING_MS);
  const plateau = EDGE_SHARE * s.maxRate;
  if (now - s.cutAt < REGROW_AFTER_MS) return rate;
  if (rate < plateau) return Math.min(plateau, rate * REGROW_GAIN ** ((now - last) / 1000));
  const longestMs = PLATEAU_MS * 2 ** MAX_PROBE_BACKOFF;
  const backoffMs = PLATEAU_MS * 2 ** Math.min(s.failedProbes, MAX_PROBE_BACKOFF);
  // Failed probes cost no more than PROBE_REFUSAL_SHARE of what the edge lets through meanwhile,
  // within the longest wait (a slow edge would otherwise wait minutes to find a limit raised).
  const budgetMs =
    s.failedProbes > 0 ? (s.probeCost * 1000) / (PROBE_REFUSAL_SHARE * s.maxRate) : 0;
  const plateauMs = Math.max(backoffMs, Math.min(budgetMs, longestMs));
  const t = Math.max(0, (now - s.plateauFrom - plateauMs) / 1000);
  return plateau + CUBIC_SCALE * t ** 3;
}

/** Without a long `Retry-After`: a share of the block's age, so its end is overshot by that much at most. */
export function probeIntervalMs(age: number): number {
  const early = Math.min(EARLY_PROBE_MAX_MS, EARLY_PROBE_SHARE * age);
  return Math.min(
    MAX_PROBE_INTERVAL_MS,
    Math.max(FIRST_PROBE_MS, early, PROBE_SHARE_OF_BLOCK * age),
  );
}
