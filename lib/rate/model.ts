/**
 * The rate model's transitions: pure functions of a state (`state.ts`), the clock passed in, each
 * returning a new state and never changing the one given; rule numbers are docs/rate-model.md's.
 * Invariants: the pace is 1 a second at least and never over the ceiling; while blocked only one
 * probe is out at a time; no request starts while the learned cap is full.
 */
import {
  BLOCK_AFTER_REFUSALS,
  BLOCKING_MS,
  DOUBLING_MS,
  ESTIMATE_ANSWERS,
  FIRST_PROBE_MS,
  HEADROOM,
  LARGE_CUT,
  MAX_PROBE_MS,
  PROBE_GAIN,
  SETTLE_MS,
  WINDOW_MS,
} from "./constants";
import { answered, beginBlock, guessWindowEnd, learnFromHeaders } from "./holds";
import type { Signal } from "./signal";
import {
  acceptedOverWindow,
  acceptedWithin,
  copyState,
  cut,
  forget,
  orInfinity,
  orNever,
  plateau,
  push,
  type RateState,
  rateSinceCut,
  refusedShare,
  sentRate,
  type Ticket,
  windowFreeAt,
} from "./state";

/** What a refusal means for the refused request: wait until `retryAt`; `blocked`: everyone is held. */
export interface Verdict {
  retryAt: number;
  blocked: boolean;
}

/** Rules 1, 2, 13: when the next may start (`undefined`: the cap full or a block's probe out). */
export function nextStartAt(s: RateState, now: number): number | undefined {
  if (s.inFlight >= orInfinity(s.cap) || (s.blocked && s.probeOut)) return undefined;
  const at = Math.max(now, orNever(s.heldUntil));
  if (s.blocked || s.pace === null) return at;
  // GCRA one clock tick (1 ms) early: a timer that fired late by a tick is not a lost start.
  return Math.max(at, orNever(s.nextStart) - 1, windowFreeAt(s));
}

/** A request starts at `now` (when `nextStartAt` allowed): its ticket. */
export function start(state: RateState, now: number): { state: RateState; ticket: Ticket } {
  const s = copyState(state);
  // Rule 6: idle since the cut, less a start's spacing: allowed, none started, none in flight.
  if (s.pace !== null && s.cutAt !== null && !s.blocked && s.inFlight === 0) {
    const allowedAt = Math.max(orNever(s.heldUntil), orNever(s.nextStart), windowFreeAt(s));
    const from = Math.max(allowedAt, s.cutAt, orNever(s.accepted.at(-1) ?? null));
    s.idleMs = (s.idleMs ?? 0) + Math.max(0, now - from - 1000 / s.pace);
  }
  s.inFlight++;
  const ticket: Ticket = { id: s.nextId++, startedAt: now, level: s.inFlight, probe: s.blocked };
  if (s.blocked) s.probeOut = true;
  forget(s, now);
  s.firstStart ??= now;
  push(s.starts, { at: now, id: ticket.id, refused: false });
  if (s.pace !== null) s.nextStart = Math.max(orNever(s.nextStart), now) + 1000 / s.pace;
  return { state: s, ticket };
}

/** Any answer but a refusal: the upstream processed the request. */
export function accepted(
  state: RateState,
  ticket: Ticket,
  now: number,
  signal: Signal = {},
): RateState {
  const s = copyState(state);
  forget(s, now);
  answered(s, ticket, false);
  push(s.accepted, now);
  s.windowFrom ??= now;
  push(s.sinceCut, now, 2 * ESTIMATE_ANSWERS);
  s.refusedInARow = 0;
  s.acceptedSinceBlock++;
  if (ticket.probe) {
    // Rule 12: a probe accepted ends the block; the rate since it is measured afresh.
    s.blocked = false;
    s.probeOut = false;
    s.heldUntil = Math.min(orNever(s.heldUntil), now);
    s.blockEndedAt = s.blockInTail ? null : now;
    s.acceptedSinceBlock = 0;
    s.sinceCut = [];
    s.windowFrom = now;
    s.nextStart = now;
    s.lastUpdate = now;
  }
  learnFromHeaders(s, signal, now);
  grow(s, now);
  return s;
}

/** No answer at all (network error, timeout, abort): nothing learned; a probe may go again. */
export function unanswered(state: RateState, ticket: Ticket): RateState {
  const s = copyState(state);
  s.inFlight--;
  if (ticket.probe) s.probeOut = false;
  return s;
}

/**
 * A refusal (429): lowers the pace or blocks, and says when the request may go again. `hold:
 * false` (a caller that waits elsewhere, such as a queue worker) learns only: no block holds
 * the requests after it.
 */
export function refused(
  state: RateState,
  ticket: Ticket,
  now: number,
  signal: Signal = {},
  hold = true,
): { state: RateState; verdict: Verdict } {
  const s = copyState(state);
  forget(s, now);
  const entry = s.starts.findIndex((x) => x.id === ticket.id);
  if (entry >= 0) s.starts[entry] = { ...(s.starts[entry] as (typeof s.starts)[0]), refused: true };
  const byCap = answered(s, ticket, true);
  learnFromHeaders(s, signal, now);
  const retryAfterMs = signal.retryAfterMs;
  const longWait = retryAfterMs !== undefined && retryAfterMs >= BLOCKING_MS;
  const verdict = (blocked: boolean, retryAt = orNever(s.heldUntil)) => ({
    state: s,
    verdict: { retryAt, blocked },
  });
  if (ticket.probe) {
    // Rule 12: a probe refused: the next after its Retry-After, or a tenth of the block's age
    // (FIRST_PROBE_MS / BLOCKING_MS).
    s.probeOut = false;
    if (orNever(s.heldUntil) < orNever(s.blockEnd)) {
      // A guessed window end refused: the header's end stands, and no other guess is made.
      s.guessRefused = true;
      s.heldUntil = s.blockEnd;
      return verdict(true);
    }
    // The shortest block's first probe comes FIRST_PROBE_MS into it; a longer one's in proportion.
    const scaled = ((now - s.blockFrom) * FIRST_PROBE_MS) / BLOCKING_MS;
    const probeIn = Math.min(MAX_PROBE_MS, Math.max(FIRST_PROBE_MS, scaled));
    const wait = retryAfterMs !== undefined && retryAfterMs > WINDOW_MS ? retryAfterMs : probeIn;
    s.heldUntil = Math.max(orNever(s.heldUntil), now + wait);
    return verdict(true);
  }
  if (s.blocked) {
    if (longWait) guessWindowEnd(s, ticket, signal);
    return verdict(true);
  }
  // Rule 10: soon after a block's end (fewer accepted since than half the estimate), refusals are
  // its tail (a log still full of the requests it refused): they may block again, measure nothing.
  // Once: a block begun in a tail has none (a window smaller than half the estimate, spent again).
  const tail =
    now - orNever(s.blockEndedAt) < WINDOW_MS && s.acceptedSinceBlock < orInfinity(s.estimate) / 2;
  if (!byCap) s.refusedInARow++;
  // Rule 11: nothing but refusals lately (a window spent, a quota), or a long wait: a block.
  const spent = s.refusedInARow >= BLOCK_AFTER_REFUSALS;
  if (spent || (hold && longWait)) {
    // What the last whole window accepted, counted (not extrapolated from a shorter span), is the
    // limit; probing above it waits as after a refused probe.
    const measured = Math.max(1, (acceptedWithin(s, now, WINDOW_MS) * 1000) / WINDOW_MS);
    // In a block's tail, or probing, the window counted the block's or the probe's refusals too: at
    // most halved. Soon after a probe's refusal cut, its requests in flight spent the window: the
    // estimate stands. Nothing accepted (a quota's first answer): nothing measured.
    const halved = tail || probing(s);
    const stands = now - orNever(s.probeRefusedAt) < WINDOW_MS;
    if (acceptedWithin(s, now, WINDOW_MS) > 0 && !stands) {
      cut(s, now, halved ? Math.min(orInfinity(s.estimate), measured * 2) : measured);
    }
    // A window spent refuses every request in flight: the next probe waits as after two refused.
    s.failedProbes += 2;
    s.raised = null;
    if (hold) {
      beginBlock(s, now, longWait ? retryAfterMs : FIRST_PROBE_MS);
      s.blockInTail = tail;
      if (longWait) guessWindowEnd(s, ticket, signal);
      return verdict(true);
    }
  } else if (
    // Rule 6: after a cut, a refusal cuts once the rate since it is measured (a window's count
    // still holds a bucket's burst).
    !byCap &&
    (ticket.startedAt >= orNever(s.cutAt) ? rateMeasured(s) || s.startup : saturated(s))
  ) {
    // Rule 7: a lone refusal (a window and 1 / (1 - HEADROOM) answers in the log since the one
    // before), not probing, is noise: a stall, a request that arrived early. A limit refuses again.
    const previous = orNever(s.lastRefusal);
    const answersSince = refusedShare(s, previous).answers;
    const lone = !probing(s) && now - previous > WINDOW_MS && answersSince * (1 - HEADROOM) >= 1;
    s.lastRefusal = now;
    if (!lone) cutToEstimate(s, now, tail, previous);
  }
  return verdict(false, now + (retryAfterMs ?? 0));
}

/** Above the estimate itself (the plateau's headroom spent): a refusal now is the probe's. */
const probing = (s: RateState): boolean => orInfinity(s.pace) > orInfinity(s.estimate);

/** The rate since the cut is measured (`ESTIMATE_ANSWERS` accepted since). */
const rateMeasured = (s: RateState): boolean => rateSinceCut(s, ESTIMATE_ANSWERS) !== undefined;

/** Rule 8: a refusal of a request sent before the cut still cuts if less is accepted than the pace. */
const saturated = (s: RateState): boolean =>
  (rateSinceCut(s, ESTIMATE_ANSWERS) ?? Number.POSITIVE_INFINITY) < HEADROOM * orInfinity(s.pace);

/** Rules 5 to 7 and 9: a refusal that cuts (in startup, its exit; probing, under the estimate). */
function cutToEstimate(s: RateState, now: number, tail: boolean, previous: number): void {
  // Rule 7: at or under the share of refusals learned as noise (this one aside: a window's share
  // is known to one answer), refusals measure nothing.
  const recent = refusedShare(s, now - WINDOW_MS);
  if (!s.startup && recent.share - 1 / recent.answers < s.noiseShare) return;
  const estimate = orInfinity(s.estimate);
  if (probing(s)) {
    // Rule 9: the estimate rises halfway to what the last second accepted if LARGE_CUT more (no
    // probe failed: it was low); else the probe failed, and the estimate moves towards the find by
    // a request at most, to one over it: a window counts to one, and a thin second is no limit.
    // Moved down so from slow start's exit's estimate, it is still what was sent (rule 7 judges no
    // cut from it, nor is rule 6's floor for the demand taken).
    const found = acceptedOverWindow(s, now);
    const more = found > (1 + LARGE_CUT) * estimate;
    const find = { from: estimate, failedProbes: s.failedProbes };
    const exit = s.exitEstimate;
    s.failedProbes = more ? 0 : s.failedProbes + 1;
    s.probeRefusedAt = now;
    const one = 1000 / WINDOW_MS;
    const near = Math.max(found + one, estimate - one);
    const moved = Math.min(near, estimate + one, Math.max(found, estimate));
    cut(s, now, Math.max(1, more ? (found + estimate) / 2 : moved));
    if (more) s.raised = find;
    else s.exitEstimate = exit && moved < estimate;
    return;
  }
  if (s.startup) {
    // Rule 5: the limit is at most what was sent; the pace goes back to what the last second
    // accepted (a window's limit; a bucket's rate and burst) and regains the rest unless refused.
    const accepted = acceptedOverWindow(s, now);
    cut(s, now, Math.max(1, accepted, sentRate(s, now, WINDOW_MS / 2)), HEADROOM * accepted);
    s.exitEstimate = true;
    return;
  }
  // Rule 6: the lower of the rate since the cut and what the last second accepted; in a block's
  // tail the last second is mostly the block's, and only a rate since the cut under the pace tells.
  if (tail && !saturated(s)) return;
  // Rule 7: refusals that cuts of LARGE_CUT or more (smaller ones add up) left as frequent (nearer
  // the share before than the one a limit leaves, accepting as much at the lower pace; at most
  // twice it, under half the answers) are noise: the estimate before the cuts comes back, and no
  // share as high cuts again. Shares: before, since the refusal before this one (a window at
  // least); since, of `ESTIMATE_ANSWERS` answers and two refusals (one is no share).
  const since = s.judgedFrom === null ? undefined : refusedShare(s, s.judgedFrom);
  if (since && since.answers >= ESTIMATE_ANSWERS && since.refused > 1) {
    const large = orInfinity(s.estimate) <= (1 - LARGE_CUT) * orInfinity(s.estimateBefore);
    const ratio = orInfinity(s.estimateBefore) / orInfinity(s.estimate);
    const limitShare = Math.max(0, 1 - (1 - s.shareBefore) * ratio);
    const { share } = since;
    const steady = share >= (s.shareBefore + limitShare) / 2 && share <= 2 * s.shareBefore;
    if (large) s.judgedFrom = null;
    if (large && steady && share < 0.5) {
      s.noiseShare = Math.max(share, recent.share);
      s.estimate = s.estimateBefore;
      s.raised = null;
      return;
    }
  }
  if (s.judgedFrom === null && !s.exitEstimate) {
    s.judgedFrom = now;
    s.shareBefore = refusedShare(s, Math.min(now - WINDOW_MS, previous)).share;
    s.estimateBefore = s.estimate;
  }
  // Rule 6: idle LARGE_CUT of the time since the cut, the rate since it is the demand's: no measure.
  const idle = !tail && (s.idleMs ?? 0) > LARGE_CUT * (now - orNever(s.cutAt));
  const measured = rateSinceCut(s, ESTIMATE_ANSWERS) ?? Number.POSITIVE_INFINITY;
  const sinceCut = idle ? orInfinity(s.estimate) : measured;
  const lastSecond = tail ? Number.POSITIVE_INFINITY : acceptedOverWindow(s, now);
  // Rule 6: a window's first refusal, sent LARGE_CUT under the plateau, counted the demand.
  const settled = orInfinity(s.pace) >= plateau(s) && !s.exitEstimate && now - previous > WINDOW_MS;
  const demand = settled && sentRate(s, now, WINDOW_MS) < (1 - LARGE_CUT) * orInfinity(s.pace);
  const floor = demand ? (1 - LARGE_CUT) * (s.estimate ?? 0) : 0;
  const next = Math.max(1, floor, Math.min(sinceCut, lastSecond));
  // Rule 9: the first cut after a find, measured back to about the estimate before it: the find
  // was a burst, the probe failed after all (a cut to the demand's floor, or idle, measured nothing).
  const raised = s.raised ?? null;
  const back = raised !== null && Math.abs(next - raised.from) <= (LARGE_CUT / 2) * raised.from;
  if (back && !idle && !demand) s.failedProbes = raised.failedProbes + 1;
  cut(s, now, next);
}

/** Rules 3 and 4: startup doubles; later the pace regains the plateau (x2 a window), holds, then probes above. */
function grow(s: RateState, now: number): void {
  const last = s.lastUpdate ?? now;
  s.lastUpdate = now;
  if (s.pace === null) return;
  const pace = s.pace;
  const top = plateau(s);
  // Rules 3 and 4: never twice what the last window sent (a client that cannot keep up, or idle).
  const twiceSent = () => Math.max(2 * sentRate(s, now, WINDOW_MS), pace);
  let next: number;
  if (s.startup) {
    next = Math.min(pace * 2 ** ((now - last) / DOUBLING_MS), twiceSent());
  } else if (pace < top) {
    if (now - orNever(s.cutAt) < SETTLE_MS) return;
    next = Math.min(top, pace * 2 ** ((now - last) / WINDOW_MS), twiceSent());
  } else {
    const holdMs = Math.min(MAX_PROBE_MS, WINDOW_MS * 2 ** s.failedProbes);
    if (now - orNever(s.cutAt) < holdMs) return;
    // Along a cubic: slow near the estimate (a probe of a window or a log costs the requests in
    // flight), fast far from it (an estimate taken too low recovers).
    const t = (now - orNever(s.cutAt) - holdMs) / 1000;
    next = Math.min(top * (1 + PROBE_GAIN * t ** 3), twiceSent());
  }
  s.pace = Math.min(orInfinity(s.ceiling), Math.max(1, next));
}
