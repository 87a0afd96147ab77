/**
 * Refusals that keep coming whatever the pace (docs/rate-model.md, rules 26 to 28): the answers
 * counted since the last cut, the cut on trial, and the refused share shown not to fall with the
 * pace.
 */
import {
  EPISODE_ANSWERS,
  NOISE_MARGIN,
  NOISE_SHARE_MAX,
  NOISE_SHARE_MIN,
  NOISE_TRIAL_ANSWERS,
} from "./rateConstants";
import type { StartTicket } from "./rateTypes";

/** A refusal-driven cut on trial: the pace and edge before it, and the refused share that led to it. */
export interface CutTrial {
  pace: number;
  maxRate: number;
  share: number;
}

export class RefusalNoise {
  /**
   * Answers of requests started from `from` on (a 429 for the number in flight not counted);
   * `leading`: the refusals before the first accepted one, apart.
   */
  #tally = emptyTally(Number.NEGATIVE_INFINITY);
  #trial: CutTrial | undefined;
  /** The refused share shown not to fall with the pace (0: none shown). */
  #noiseShare = 0;

  accepted(ticket: StartTicket): void {
    if (ticket.startedAt >= this.#tally.from) this.#tally.accepted++;
  }

  /**
   * Refusals before the first accepted answer since the tally began are kept apart: after a cut,
   * they are the tail of a window spent before it (sent after the cut, refused until the window
   * ends), not a share at the new pace, and a trial is judged without them; the noise tolerated
   * counts them (nothing but refusals after a verdict of noise is no noise).
   */
  refused(ticket: StartTicket, byCap: boolean): void {
    const tally = this.#tally;
    if (byCap || ticket.probe || ticket.startedAt < tally.from) return;
    if (tally.accepted > 0) tally.refused++;
    else tally.leading++;
  }

  /**
   * Whether refusals call for a cut at pace `rate` and edge `maxRate`: not while their share is
   * noise, nor while a cut is on trial. A cut follows, and is on trial until `NOISE_TRIAL_ANSWERS`
   * answers of requests sent after it: if the share refused did not fall as a limit's would at the
   * lower pace, `revertTo` is the trial's pace and edge to go back to. `trial` false: slow start's
   * exit, whose share is the overshoot's, puts no cut on trial (reverted to, the pace had no edge
   * at all: a bucket of 20/s, burst 2, took 179 to 241 429s in 30 s).
   */
  judge(
    now: number,
    rate: number,
    maxRate: number,
    trial: boolean,
  ): { follows: boolean; revertTo?: CutTrial } {
    const tally = this.#tally;
    const answered = tally.accepted + tally.refused;
    const share = tally.refused / Math.max(1, answered);
    const telling = share >= NOISE_SHARE_MIN && share < NOISE_SHARE_MAX;
    if (this.noise()) return { follows: false };
    const onTrial = this.#trial;
    if (onTrial && onTrial.share >= NOISE_SHARE_MIN) {
      // On trial: no other cut until it is judged.
      if (answered < NOISE_TRIAL_ANSWERS) return { follows: false };
      const limited = Math.max(0, 1 - ((1 - onTrial.share) * onTrial.pace) / rate);
      // A cut too small to change a limit's share much tells nothing (in a variant of the rate
      // control, 97 to 95 a second against a bucket of 50/s: 48% refused either way, read as
      // noise, and the pace went back to 97: `noise()` says what that cost).
      const tells = onTrial.share - limited >= NOISE_SHARE_MIN;
      if (telling && tells && share >= (onTrial.share + limited) / 2) {
        this.#noiseShare = Math.max(this.#noiseShare, share);
        this.#trial = undefined;
        this.#tally = emptyTally(now);
        return { follows: false, revertTo: onTrial };
      }
    }
    if (!onTrial || answered >= NOISE_TRIAL_ANSWERS) {
      this.#trial = trial ? { pace: rate, maxRate, share } : undefined;
      this.#tally = emptyTally(now);
    }
    return { follows: true };
  }

  /**
   * While a cut is on trial and its answers are still being counted, the pace it may regrow to:
   * what was accepted before the cut (`Infinity`: no trial). Regrown above it, a limit's share
   * refused looked like noise (a fixed window of 10 a second: 217 429s in 30 s).
   */
  get trialCeiling(): number {
    const { accepted, refused } = this.#tally;
    const trial = this.#trial;
    if (!trial || trial.share < NOISE_SHARE_MIN || accepted + refused >= NOISE_TRIAL_ANSWERS) {
      return Number.POSITIVE_INFINITY;
    }
    const ceiling = (1 - trial.share) * trial.pace;
    return Number.isNaN(ceiling) ? Number.POSITIVE_INFINITY : ceiling;
  }

  /**
   * Refusals within the noise learned and under `NOISE_SHARE_MAX` of the answers, or too few
   * answers yet to tell. Twice a share learned near that bound tolerated any share: in a variant of
   * the rate control whose starts within a second were the pace / `EDGE_SHARE` at any pace, a
   * bucket of 50/s was paced at 200 a second, 1,140 429s in 12 s (the fake clock of
   * limiterKinds.test.ts, its test of a burst spent in slow start).
   */
  noise(): boolean {
    const { accepted, leading } = this.#tally;
    const refused = this.#tally.refused + leading;
    const answered = accepted + refused;
    return (
      this.#noiseShare > 0 &&
      (answered < EPISODE_ANSWERS ||
        (refused <= NOISE_MARGIN * this.#noiseShare * answered &&
          refused < NOISE_SHARE_MAX * answered))
    );
  }
}

/** A tally of the answers of requests started from `from` on: none yet. */
function emptyTally(from: number) {
  return { from, accepted: 0, refused: 0, leading: 0 };
}
