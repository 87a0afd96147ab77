/**
 * The controller's decisions on a 429 and the answers after it (docs/rate-model.md, rules 10 to
 * 19, and 26 and 27 where they call on `RefusalNoise`): slow start's exit, an episode opened and
 * weighed, the edge learned, the pace cut. Functions of the controller's state (`rateState.ts`);
 * `episode.ts` counts an episode's answers.
 */
import {
  acceptedPerSecond,
  type Episode,
  episodeProgress,
  exitEpisode,
  meanPace,
  openedEpisode,
} from "./episode";
import {
  EDGE_SHARE,
  MIN_RATE,
  NOISE_QUIET_MS,
  PROBE_MARGIN,
  SENT_SPAN_MS,
  WINDOW_MS,
} from "./rateConstants";
import { cut, plateau, type RateState } from "./rateState";
import type { StartTicket } from "./rateTypes";

/** The first refusal of an episode. */
export function openEpisode(
  s: RateState,
  ticket: StartTicket,
  now: number,
  previousRefusal: number,
): void {
  if (s.noise.noise()) return;
  const sent = s.log.sentBefore(ticket, SENT_SPAN_MS);
  const acceptedRate = s.log.acceptedRate(now);
  const sustained =
    previousRefusal <= ticket.startedAt - WINDOW_MS && !s.slowStart
      ? s.log.sentBefore(ticket, WINDOW_MS)
      : 0;
  const probing = !s.slowStart && s.rate > plateau(s) * (1 + PROBE_MARGIN);
  const quiet = previousRefusal <= ticket.startedAt - NOISE_QUIET_MS;
  const seen = {
    sent,
    acceptedRate,
    exit: s.slowStart,
    probe: probing,
    afterBlock: now - s.block.endedAt < WINDOW_MS,
    sustained,
  };
  const episode = s.slowStart ? exitEpisode(ticket, now, seen) : openedEpisode(now, quiet, seen);
  if (s.slowStart) {
    // Past the edge: back to what was accepted while finding out how far past.
    s.slowStart = false;
    s.log.measureAcceptedFrom(now);
    if (followsPace(s, now, false)) {
      s.maxRate = sent;
      // A cap on trial holds the pace until it is confirmed or dropped (`trialEnded`).
      if (s.inFlight.onTrial) s.trialCut = EDGE_SHARE * acceptedRate;
      else cut(s, now, EDGE_SHARE * acceptedRate);
    }
  } else if (probing) {
    // The probe found the edge: back to the plateau and probe later next time; an edge learned
    // too low (from a transient) rises halfway to what was accepted over the window, if higher
    // (a bucket's, refilled while below its rate, includes its burst).
    s.failedProbes++;
    s.probeFailedAt = now;
    s.probeCost = 1;
    const seen = Math.min(sent, acceptedRate);
    if (seen > s.maxRate) s.maxRate = (s.maxRate + seen) / 2;
    cut(s, now, plateau(s));
  } else if (!episode.suspect) {
    cutBelow(s, now, episode);
  }
  s.episode = episode;
}

/** Once an episode has enough answers: saturation, an edge crossed, or noise. */
export function weigh(s: RateState, now: number): void {
  const e = s.episode;
  if (!e) return;
  const { done, saturated } = episodeProgress(e, now);
  if (!done) return;
  // Slow start's exit, from the requests in flight: a rate that calls for no cut is theirs,
  // not the upstream's (a bucket of one refuses some at any pace near its rate); the requests
  // sent since decide.
  const inFlightRate = e.inFlightUntil === undefined ? undefined : acceptedPerSecond(e);
  if (inFlightRate !== undefined && EDGE_SHARE * inFlightRate >= s.rate) return;
  s.episode = undefined;
  if (e.suspect && e.refused === 0) return;
  if (e.suspect) cutBelow(s, now, e);
  if (e.afterBlock) return;
  if (saturated && followsPace(s, now, !e.exit)) {
    // What the upstream accepted per second while refusing the rest is its rate, if they were
    // sent faster: sent no faster, the pace was the bound (slow start's exit cut to 3.9 a
    // second against a bucket of one at 10/s, and that became the edge). A rate held a whole
    // window before is not above it (a log that counts refusals accepts ever fewer). One answer
    // accepted is no rate.
    const measured = acceptedPerSecond(e);
    if (measured !== undefined && measured < EDGE_SHARE * meanPace(e)) {
      learnEdge(s, measured, e.sustained);
      cut(s, now, Math.min(s.rate, plateau(s)));
    }
  } else if (!e.exit && !e.probe && !s.noise.noise()) {
    // Crossed: the edge is what the upstream accepted over the window before (a window's limit).
    learnEdge(s, e.acceptedRate);
  }
}

/** A new edge: probing above it starts over from its first plateau if it moved. */
function learnEdge(s: RateState, ...rates: number[]): void {
  const edge = Math.max(MIN_RATE / EDGE_SHARE, ...rates);
  if (Math.abs(edge - s.maxRate) > PROBE_MARGIN * 5 * s.maxRate) s.failedProbes = 0;
  s.maxRate = edge;
}

/** Back below the rate the refused request was sent at and what was accepted over the window. */
function cutBelow(s: RateState, now: number, e: Episode): void {
  if (!followsPace(s, now, true)) return;
  cut(s, now, Math.min(s.rate, EDGE_SHARE * Math.min(e.sent, e.acceptedRate)));
}

/**
 * Whether refusals call for a cut (`RefusalNoise.judge`); a cut shown not to help is undone.
 * `trial`: false for slow start's exit and its episode.
 */
function followsPace(s: RateState, now: number, trial: boolean): boolean {
  const { follows, revertTo } = s.noise.judge(now, s.rate, s.maxRate, trial);
  if (revertTo) {
    s.rate = Math.min(s.ceiling, Math.max(s.rate, revertTo.pace));
    s.maxRate = Math.max(s.maxRate, revertTo.maxRate);
  }
  return follows;
}
