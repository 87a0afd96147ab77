/**
 * The rate controller's logic on a fake clock: a discrete simulation, one millisecond a step, of a
 * client with endless work and an upstream with a sliding one-second limit (as the simulators
 * enforce it), so every figure is exact and the same on every run.
 */
import { describe, expect, it } from "vitest";
import {
  HEADROOM,
  newRateState,
  parseRateLimitState,
  RateModel,
  type Ticket,
} from "../../lib/rate";

interface Upstream {
  /** Accepted per sliding second at time t (Infinity: no limit). */
  limit: (t: number) => number;
  /** Every request refused while this is true (a quota's block), without Retry-After. */
  blocked?: (t: number) => boolean;
  /** Send `RateLimit-Limit`, `-Remaining`, `-Reset` on every answer. */
  headers?: boolean;
  retryAfter?: boolean;
}

interface Run {
  starts: number[];
  accepted: number[];
  refused: number[];
  /** The most requests in flight at once while the upstream was blocking. */
  peakInFlightWhileBlocked: number;
}

function simulate(
  rate: RateModel,
  upstream: Upstream,
  options: { ms: number; concurrency?: number; latencyMs?: number },
): Run {
  const concurrency = options.concurrency ?? 8;
  const latency = options.latencyMs ?? 40;
  const window: number[] = [];
  const run: Run = { starts: [], accepted: [], refused: [], peakInFlightWhileBlocked: 0 };
  const inFlight: Array<{ ticket: Ticket; at: number; ok: boolean; headers: Headers }> = [];
  for (let t = 0; t < options.ms; t++) {
    for (const answer of inFlight.filter((a) => a.at === t)) {
      inFlight.splice(inFlight.indexOf(answer), 1);
      if (answer.ok) {
        run.accepted.push(t);
        rate.accepted(answer.ticket, t, answer.headers);
      } else {
        run.refused.push(t);
        const retryAfter =
          upstream.retryAfter === false || upstream.blocked?.(t) ? undefined : 1000;
        rate.refused(answer.ticket, t, retryAfter, answer.headers);
      }
    }
    while (inFlight.length < concurrency) {
      const at = rate.nextStartAt(t);
      if (at === undefined || at > t) break;
      const ticket = rate.start(t);
      run.starts.push(t);
      while (window.length > 0 && (window[0] as number) <= t - 1000) window.shift();
      const blocked = upstream.blocked?.(t) ?? false;
      const limit = upstream.limit(t);
      const ok = !blocked && window.length < limit;
      if (ok) window.push(t);
      const headers = new Headers();
      if (upstream.headers) {
        headers.set("ratelimit-limit", String(limit));
        headers.set("ratelimit-remaining", String(Math.max(0, limit - window.length)));
        headers.set("ratelimit-reset", "1");
      }
      inFlight.push({ ticket, at: t + latency, ok, headers });
    }
    if (upstream.blocked?.(t)) {
      run.peakInFlightWhileBlocked = Math.max(run.peakInFlightWhileBlocked, inFlight.length);
    }
  }
  return run;
}

const within = (times: number[], from: number, to: number) =>
  times.filter((t) => t >= from && t < to).length;

/** The most starts in any one-second window. */
function busiestSecond(starts: number[]): number {
  let most = 0;
  for (let i = 0, j = 0; i < starts.length; i++) {
    while ((starts[j] as number) <= (starts[i] as number) - 1000) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

describe("RateModel", () => {
  it("keeps a pace of one a second at least when the first answer is a refusal come late", () => {
    // A worker's first request waited for the shared slot, so its 429 came 600 ms after its start:
    // nothing accepted and nothing sent in the last half second made startup's exit an estimate of
    // 0, the probe above it a pace of 0, and every later start waited for ever (a cloud run's
    // last job failed delivery after delivery, its container's limiter stuck).
    const rate = new RateModel();
    rate.refused(rate.start(0), 600, undefined);
    const next = rate.start(rate.nextStartAt(601) ?? Number.POSITIVE_INFINITY);
    rate.accepted(next, 700);
    for (let t = 1_000; t <= 60_000; t += 1_000) {
      const at = rate.nextStartAt(t);
      expect(at, `at ${t} ms`).toBeDefined();
      expect(at as number, `at ${t} ms`).toBeLessThanOrEqual(t + 1_000);
      rate.accepted(rate.start(at as number), (at as number) + 40);
    }
    expect(rate.maxRate).toBeGreaterThanOrEqual(1);
    expect(rate.rate).toBeGreaterThanOrEqual(1);
  });

  it("converges just below an upstream's limit, with few 429s", () => {
    // Prepare
    const rate = new RateModel();

    // Act
    const run = simulate(rate, { limit: () => 50 }, { ms: 30_000 });

    // Assess: from 20 per second to the limit in about a second, then 45 to 50 a second.
    expect(within(run.accepted, 0, 2000)).toBeGreaterThanOrEqual(70);
    expect(within(run.accepted, 10_000, 30_000)).toBeGreaterThanOrEqual(0.93 * 50 * 20);
    expect(run.refused.length).toBeLessThanOrEqual(12);
    expect(rate.maxRate).toBeGreaterThanOrEqual(45);
    expect(rate.maxRate).toBeLessThanOrEqual(52);
  });

  it("never starts more than a configured rate in any second, and starts at it", () => {
    const rate = new RateModel({ requestsPerSecond: 10 });

    const run = simulate(rate, { limit: () => Number.POSITIVE_INFINITY }, { ms: 10_000 });

    expect(busiestSecond(run.starts)).toBe(10);
    expect(within(run.starts, 0, 1000)).toBe(10);
    expect(run.starts.length).toBeGreaterThanOrEqual(95);
  });

  it("is not paced with 0 (no ceiling) until the upstream answers 429", () => {
    const rate = new RateModel({ requestsPerSecond: 0 });

    const run = simulate(rate, { limit: () => Number.POSITIVE_INFINITY }, { ms: 1000 });

    // Eight in flight at 40 ms each: 200 a second, all the concurrency allows.
    expect(run.starts.length).toBe(200);
    expect(rate.rate).toBe(Number.POSITIVE_INFINITY);
  });

  it("learns the limit from RateLimit headers and stays below it without a single 429", () => {
    const rate = new RateModel();

    const run = simulate(rate, { limit: () => 30, headers: true }, { ms: 10_000 });

    expect(run.refused).toEqual([]);
    expect(rate.maxRate).toBe(30);
    expect(within(run.accepted, 5000, 10_000)).toBeGreaterThanOrEqual(0.9 * 30 * 5);
  });

  it("after a 429 keeps just below the limit, then probes upward and finds a higher one", () => {
    // Prepare: the limit doubles after 10 s.
    const rate = new RateModel();
    const upstream = { limit: (t: number) => (t < 10_000 ? 50 : 100) };

    // Act
    const run = simulate(rate, upstream, { ms: 45_000 });

    // Assess: refused within the first two seconds, then close to 50 a second until the limit
    // rose; probed past the old limit once the upstream allowed more: well above 50 at the end.
    expect(run.refused[0]).toBeLessThan(2000);
    expect(within(run.accepted, 3000, 10_000)).toBeGreaterThanOrEqual(0.93 * 50 * 7);
    expect(within(run.accepted, 40_000, 45_000)).toBeGreaterThanOrEqual(5 * 75);
    expect(rate.rate).toBeGreaterThan(75);
  });

  it("ignores a lone 429; a second within the window ends startup at HEADROOM of what was accepted", () => {
    const rate = new RateModel({ requestsPerSecond: 0 });
    const tickets = Array.from({ length: 61 }, (_, i) => rate.start(i * 25));
    for (const [i, ticket] of tickets.slice(0, 59).entries()) rate.accepted(ticket, i * 25 + 10);

    rate.refused(tickets[59] as Ticket, 59 * 25 + 10, 1000);
    expect(rate.rate).toBe(Number.POSITIVE_INFINITY);
    rate.refused(tickets[60] as Ticket, 60 * 25 + 10, 1000);

    // 38 accepted within the last second: the pace is 38 x HEADROOM; sent at 40 a second over
    // the half second before: the estimate.
    expect(rate.rate).toBeCloseTo(38 * HEADROOM);
    expect(rate.maxRate).toBe(40);
  });

  it("judges cuts as noise from two refusals since them at least: one is no share", () => {
    // Slow start ends at 14 a second; then one request in ten is refused, each after a cut (a
    // window's limit the pace is still over, at 10 a second). Judged from the one refusal since
    // the second cut (a tenth, as before it), the cuts read as noise and the estimate came back
    // to 11: in the cloud, 63 to 94 429s in a run behind a window of 10.
    const rate = slowStartEndedAt(70);
    const estimates: number[] = [];
    let t = 1200;
    for (let i = 0; i < 30; i++) {
      const at = Math.max(t, rate.nextStartAt(t) ?? t);
      const ticket = rate.start(at);
      if (i % 10 === 9) {
        rate.refused(ticket, at + 40, 1000);
        estimates.push(rate.maxRate);
      } else rate.accepted(ticket, at + 40);
      t = at + 1;
    }
    expect(estimates).toEqual([11, 9, 8]);
  });

  it("takes one refusal in a second sent well under the pace for no measure of the limit", () => {
    // An estimate of 11 over a bucket of 10, its burst spent; the cloud's jobs, fanning out, sent
    // 6 in the last second: one is refused. That second's count measured the demand, not the
    // limit: the estimate went to 6, and the pace took 10 s to regain 10 (1.18 x the floor).
    const state = { ...newRateState(), startup: false, estimate: 11, pace: 11 * HEADROOM };
    // Not probing: its next probe is half a minute away.
    const rate = new RateModel({ ...state, cutAt: 0, lastUpdate: 0, failedProbes: 5 });
    let t = 10_000;
    for (let i = 0; i < 30; i++, t += 1000 / 10.7) rate.accepted(rate.start(t), t + 40);
    for (let i = 0; i < 5; i++, t += 1000 / 6) rate.accepted(rate.start(t), t + 40);
    rate.refused(rate.start(t), t + 40, 1000);
    expect(rate.maxRate).toBeCloseTo(9.9);
  });

  it("takes no rate since the cut a client idle for a tenth of it sent for a measure: the last second's count is", () => {
    // Slow start's exit at 20 a second, then a client with little to send (a cloud run's jobs still
    // fanning out): 6 requests 200 ms apart, then 10 at the pace, and two refused. The 16 answers
    // since the cut came at 9 a second, the demand's rate: taken for the limit (the cloud's workers
    // read a window of 10 as 6), the pace took 10 s or more to regain it (1.23 x the floor).
    const rate = new RateModel();
    let t = 0;
    for (; t < 3000; t += 50) rate.accepted(rate.start(t), t + 40);
    rate.refused(rate.start(t), t + 40, 1000);
    rate.refused(rate.start(t + 50), t + 90, 1000);
    expect(rate.maxRate).toBeGreaterThanOrEqual(20);
    t += 1000;
    for (let i = 0; i < 6; i++, t += 200) rate.accepted(rate.start(t), t + 40);
    for (let i = 0; i < 10; i++, t += 1000 / rate.rate) rate.accepted(rate.start(t), t + 40);

    // Act
    rate.refused(rate.start(t), t + 40, 1000);
    rate.refused(rate.start(t + 10), t + 50, 1000);

    // Assess: what the last second accepted (12), not the 9 a second of the answers since the cut.
    expect(rate.maxRate).toBe(12);
  });

  it("counts no idle time while a request is in flight: a client one at a time is busy, not idle", () => {
    // An estimate of 10 a second just cut; one request at a time, each answered in 300 ms.
    const state = { ...newRateState(), startup: false, estimate: 10, pace: 10 * HEADROOM };
    const rate = new RateModel({ ...state, cutAt: 0, lastUpdate: 0, failedProbes: 5, idleMs: 0 });
    for (let t = 0; t < 6000; t += 300) rate.accepted(rate.start(t), t + 300);
    expect(rate.state.idleMs).toBe(0);
  });

  it("counts a refusal while the pace regains the plateau as ever: the pace is never raised by it", () => {
    // Cut to 5 a second under an estimate of 16; the pace doubles back towards 15.7 and, a second
    // on, has sent less than it now allows. The demand did not hold the requests back; the pace
    // did: a refusal cuts to what was accepted, and never to 90% of 16 (a pace of 14 from 11).
    const state = { ...newRateState(), startup: false, estimate: 16, pace: 5 };
    const rate = new RateModel({ ...state, cutAt: 10_000, lastUpdate: 10_000 });
    let t = 10_000;
    while (t < 11_300) {
      const at = Math.max(t, rate.nextStartAt(t) ?? t);
      rate.accepted(rate.start(at), at + 40);
      t = at + 1;
    }
    const before = rate.rate;
    expect(before).toBeLessThan(16 * HEADROOM);
    rate.refused(rate.start(t), t + 40, 1000);
    expect(rate.rate).toBeLessThan(before);
    expect(rate.maxRate).toBeLessThan(12);
  });

  it("takes refusals a cut made less frequent, as a limit's are, for no noise", () => {
    // A cut from 14 to 12 a second (judged from here: 27% refused before it) over a limit of 10,
    // which refuses 1 - 10 / pace: 15% at the new pace. Within half and twice the share before,
    // that read as noise; 14 came back, refusals of 15% never cut again, and the cloud's workers
    // met 54 429s in a run behind a bucket of 10 a second. It is the share a limit leaves.
    const state = { ...newRateState(), startup: false, estimate: 12, pace: 12 * HEADROOM };
    const judged = { judgedFrom: 5000, shareBefore: 0.27, estimateBefore: 14, lastRefusal: 4990 };
    const rate = new RateModel({ ...state, ...judged, cutAt: 5000, lastUpdate: 5000 });
    let owed = 0;
    let highest = 0;
    let t = 5000;
    for (let i = 0; i < 100; i++) {
      const at = Math.max(t, rate.nextStartAt(t) ?? t);
      const ticket = rate.start(at);
      owed += Math.max(0, 1 - 10 / rate.rate);
      if (owed >= 1) {
        owed -= 1;
        rate.refused(ticket, at + 40, 1000);
      } else rate.accepted(ticket, at + 40);
      highest = Math.max(highest, rate.maxRate);
      t = at + 1;
    }
    expect(highest).toBe(12);
    expect(rate.maxRate).toBeLessThanOrEqual(10);
  });

  it("never restores slow start's exit estimate as noise: it is what was sent, not what was accepted", () => {
    // Slow start ends at one refusal, 16 sent in 800 ms: an estimate of 20 a second. Then the pace
    // stays over a limit of 10, every fifth refused (a cloud's workers regained the exit's estimate
    // while a sync had little to send, then met the limit). Judged against the exit's estimate, the
    // cuts read as noise: 20 came back, and refusals of up to 20% cut nothing more (63 429s in
    // a minute of the cloud's window of 10 a second).
    const rate = slowStartEndedAt(50);
    expect(rate.maxRate).toBe(20);
    // Cut to what was accepted (10 a second of 12.5 sent), and judged from there.
    expect(highestWithEveryFifthRefused(rate, 1000)).toBeLessThan(14);
  });

  it("regains the plateau no faster than twice what the last window sent: a client sending little piles up no pace", () => {
    // Prepare: an estimate of 20 a second, the pace cut to 10 (slow start's exit: 20 sent, 10
    // accepted).
    const cutTo10 = { ...newRateState(), estimate: 20, pace: 10, startup: false, cutAt: 0 };
    const rate = new RateModel({ ...cutTo10, lastUpdate: 0 });

    // Act: a request a second for 3 s (a cloud run's jobs fanning out).
    for (let t = 1000; t <= 3000; t += 1000) rate.accepted(rate.start(t), t + 40);

    // Assess: the pace stays at 10 (2 a second sent). Regained to 19.6 meanwhile, the jobs that
    // came next met the limit at twice its rate (the cloud's workers, a bucket of 10: 29 429s).
    expect(rate.rate).toBe(10);
  });

  it("judges no cut from an estimate a refused probe moved from slow start's exit's: still what was sent", () => {
    // Prepare: slow start's exit at an estimate of 20 (sent; 15 accepted), then 12 a second
    // accepted while the pace regains 20 and goes above it; a refusal moves the estimate to 19.
    const rate = slowStartEndedAt(50);
    let t = 1000;
    for (; rate.rate <= rate.maxRate; t += 1000 / 12) rate.accepted(rate.start(t), t + 40);
    rate.refused(rate.start(t), t + 40, 1000);
    expect(rate.maxRate).toBe(19);

    // Act: every fifth refused, as in the case above.
    const highest = highestWithEveryFifthRefused(rate, t + 100);

    // Assess: judged against 19, the cuts read as noise and 19 came back under a window of 10 (the
    // cloud's workers, from an exit at 16: 15 came back, 48 429s in a run).
    expect(highest).toBeLessThan(14);
  });

  it("counts a probe refused as failed unless it found LARGE_CUT more, moving the estimate one request towards its find", () => {
    // Prepare: probing above an estimate of 20, then a second at 21.5 a second, accepted (a
    // bucket's burst refilled at the plateau, or a limit a little over the estimate).
    const { rate, at } = probingAbove20();
    expect(rate.maxRate).toBe(20);
    let t = at;
    for (const end = t + 1000; t < end; t += 1000 / 21.5) rate.accepted(rate.start(t), t + 40);
    const before = rate.state.failedProbes;

    // Act
    rate.refused(rate.start(t), t + 40, 1000);

    // Assess: 5% more is not a higher limit found: the next probe waits longer, and the estimate
    // moves one request towards the find (left at 20, a window of 21 was never used in full; taken
    // whole, a bucket's refill crept into it).
    expect(rate.state.failedProbes).toBe(before + 1);
    expect(rate.maxRate).toBe(21);
  });

  it("counts a window's find to one request: a probe that found 19 under an estimate of 20 keeps 20", () => {
    // Prepare: probing above an estimate of 20, then a second at 19.5 a second: a window of 20
    // met at a phase that counts 19.
    const { rate, at } = probingAbove20();
    let t = at;
    for (const end = t + 1000; t < end; t += 1000 / 19.5) rate.accepted(rate.start(t), t + 40);

    // Act
    rate.refused(rate.start(t), t + 40, 1000);

    // Assess: 19 found, known to one request: the estimate stays 20 (taken as 19, the pace fell
    // under the window's limit while the probes' holds doubled).
    expect(rate.maxRate).toBe(20);
  });

  it("lowers the estimate one request at most for a probe that found far less: the demand, not the limit", () => {
    // Prepare: probing above an estimate of 20, then a second at 10 a second: the client's work
    // thinned (a cloud run between its lists), not the upstream's limit.
    const { rate, at } = probingAbove20();
    let t = at;
    for (const end = t + 1000; t < end; t += 100) rate.accepted(rate.start(t), t + 40);

    // Act
    rate.refused(rate.start(t), t + 40, 1000);

    // Assess: the plateau under 20 was accepted before the probe: 19, not the 11 the second found
    // (a thin second says nothing of the limit).
    expect(rate.maxRate).toBe(19);
  });

  it("counts no probe failed once one finds LARGE_CUT more: the estimate was low, and probing resumes after a window", () => {
    // Prepare: probing above an estimate of 20 after two refused probes, then a second at 30 a
    // second, accepted.
    const { rate, at } = twiceRefusedAbove20();
    let t = at;
    const failedBefore = rate.state.failedProbes;
    expect(failedBefore).toBeGreaterThanOrEqual(2);
    for (const end = t + 1000; t < end; t += 1000 / 30) rate.accepted(rate.start(t), t + 40);

    // Act
    rate.refused(rate.start(t), t + 40, 1000);

    // Assess: halfway to the find, and the next probe's hold is a window again, not 4 or more;
    // the find is kept, with the probes refused before it.
    expect(rate.maxRate).toBeGreaterThan(22);
    expect(rate.state.failedProbes).toBe(0);
    expect(rate.state.raised).toEqual({ from: 20, failedProbes: failedBefore });
  });

  it("counts the probe failed, on top of those before its find, when a cut takes the estimate back to about where the find raised it from", () => {
    // A bucket of 20 a second whose refilled burst a probe found as 30: the estimate rose to 25,
    // then the requests came back at 20 a second, and the next refusal cut. Under noise, a cut
    // to 15 measured something else: no probe counted.
    for (const [answersPerSecond, counted] of [
      [20, 1],
      [15, 0],
    ] as const) {
      const { rate, at, failedBefore } = raisedFrom20();
      expect(failedBefore).toBeGreaterThanOrEqual(2);
      const events: [number, () => void][] = [];
      for (let k = 0; k < 40; k++) {
        const startAt = at + (k * 1000) / 24.5;
        events.push([
          startAt,
          () => {
            const ticket = rate.start(startAt);
            const answerAt = at + 40 + (k * 1000) / answersPerSecond;
            events.push([answerAt, () => rate.accepted(ticket, answerAt)]);
          },
        ]);
      }
      for (let next = events.shift(); next; next = events.shift()) {
        if (next[0] > at + 1_500) break;
        next[1]();
        events.sort((a, b) => a[0] - b[0]);
      }
      const t = at + 1_500;

      // Act
      rate.refused(rate.start(t), t + 40, 1000);

      // Assess
      expect(rate.maxRate, `${answersPerSecond}/s`).toBeLessThan(24);
      const failed = counted ? failedBefore + 1 : 0;
      expect(rate.state.failedProbes, `${answersPerSecond}/s`).toBe(failed);
      expect(rate.state.raised).toBeNull();
    }
  });

  it("counts no probe failed for a cut to the demand's floor after a find: it measured no limit", () => {
    // Prepare: a find of 23 a second raised the estimate from 20 to 21.5; the client then sent
    // 12 a second, all accepted. Its floor, 90% of 21.5, is within a twentieth of 20.
    const { rate, at, failedBefore } = raisedFrom20(23);
    let t = at;
    for (const end = t + 2_000; t < end; t += 1000 / 12) rate.accepted(rate.start(t), t + 40);

    // Act
    rate.refused(rate.start(t), t + 40, 1000);

    // Assess: cut to the floor, and no probe counted: the holds stay as the find left them.
    expect(failedBefore).toBeGreaterThanOrEqual(2);
    expect(rate.maxRate).toBeCloseTo(0.9 * 21.5, 0);
    expect(rate.state.failedProbes).toBe(0);
  });

  it("waits out a quota block with one probe at a time, ending soon after the block", () => {
    // Prepare: everything refused, without Retry-After, from 3 s to 33 s.
    const rate = new RateModel();
    const upstream = {
      limit: () => Number.POSITIVE_INFINITY,
      blocked: (t: number) => t >= 3000 && t < 33_000,
    };

    // Act
    const run = simulate(rate, upstream, { ms: 45_000 });

    // Assess: in flight when it began, then probes one by one, 0.2 s apart, then a tenth of
    // the block's age apart (10 in its first 2 s, 28 from 2 to 30 s).
    const refusedInBlock = within(run.refused, 3000, 33_100);
    expect(refusedInBlock).toBeLessThanOrEqual(8 + 10 + 30);
    expect(run.peakInFlightWhileBlocked).toBeLessThanOrEqual(8);
    const probesLate = run.starts.filter((t) => t >= 10_000 && t < 33_000).length;
    // A tenth of its age apart from 7 s to 30 s of block: ln(30 / 7) / ln(1.1), 15 probes.
    expect(probesLate).toBeLessThanOrEqual(16);
    // The first request accepted after the block: at most 10% of its length (plus a probe's
    // minimum spacing) after its end.
    const firstAfter = run.accepted.find((t) => t >= 33_000) as number;
    expect(firstAfter - 33_000).toBeLessThanOrEqual(0.1 * 30_000 + 2000);
    expect(within(run.accepted, 40_000, 45_000)).toBeGreaterThan(100);
  });

  it("spends an hourly allowance at its own pace: a long window's Limit is not a rate", () => {
    const rate = new RateModel();
    const headers = new Headers({
      "x-ratelimit-limit": "5000",
      "x-ratelimit-remaining": "4000",
      "x-ratelimit-reset": "1800",
    });

    rate.accepted(rate.start(0), 50, headers);

    expect(rate.maxRate).toBe(Number.POSITIVE_INFINITY);
    expect(rate.rate).toBeGreaterThanOrEqual(20);
  });

  it("holds every start until a far Reset when the headers say nothing remains", () => {
    const rate = new RateModel();
    const ticket = rate.start(0);
    const headers = new Headers({
      "x-ratelimit-limit": "1000",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": "60",
    });

    rate.accepted(ticket, 50, headers);

    expect(rate.nextStartAt(100)).toBe(60_050);
    rate.start(60_050);
    // The first start after the hold is a probe: nothing else until it is answered.
    expect(rate.nextStartAt(60_060)).toBeUndefined();
  });
});

describe("RateModel at a fixed window's end", () => {
  const retryAfter = (seconds: number) => new Headers({ "retry-after": String(seconds) });
  /**
   * A request at 0 answered at 40 (the window's start at the latest), three sent at 3,010, 3,060
   * and 3,090, the first refused at 3,050.
   */
  function refusedForWindow(seconds: number) {
    const rate = new RateModel();
    rate.accepted(rate.start(0), 40);
    const [first, second, third] = [3010, 3060, 3090].map((t) => rate.start(t)) as Ticket[];
    const verdict = rate.refused(first as Ticket, 3050, seconds * 1000, retryAfter(seconds));
    return { rate, verdict, second: second as Ticket, third: third as Ticket };
  }

  it("probes at a whole number of seconds from the first answer when that falls in Retry-After's last second", () => {
    // Retry-After: 8 on a request sent at 3,010: the window ends after 10,010 and by 11,050.
    const { rate, verdict } = refusedForWindow(8);

    // 10 s after the first answer, 1,010 ms before the header's end.
    expect(verdict).toEqual({ retryAt: 10_040, blocked: true });
    expect(rate.nextStartAt(3100)).toBe(10_040);
    const probe = rate.start(10_040);
    expect(probe.probe).toBe(true);
    expect(rate.nextStartAt(10_050)).toBeUndefined();
    rate.accepted(probe, 10_080);
    expect(rate.blocked).toBe(false);
  });

  it("waits out the header after a guess refused: one 429 is what a wrong guess costs", () => {
    const { rate } = refusedForWindow(8);

    rate.refused(rate.start(10_040), 10_080, 1000, retryAfter(1));

    expect(rate.blocked).toBe(true);
    expect(rate.nextStartAt(10_100)).toBe(11_050);
  });

  it("narrows the guess with each later 429 of the block, and makes none within 100 ms of the header's end", () => {
    // A later 429 sent at 3,060 with Retry-After 6 says nothing new (it ends after 8,060); one
    // sent at 3,090 with Retry-After 8 moves the window's end past 10,090: 10,040 is too soon.
    const { rate, second, third } = refusedForWindow(8);
    rate.refused(second, 3100, 6000, retryAfter(6));
    expect(rate.nextStartAt(3100)).toBe(10_040);

    rate.refused(third, 3130, 8000, retryAfter(8));

    // 11,040 is within 100 ms of the header's end (11,050): no guess, the header stands.
    expect(rate.nextStartAt(3130)).toBe(11_050);
  });

  it("guesses once a block: a 429 that comes after the guess was refused makes no other", () => {
    const { rate, second } = refusedForWindow(8);
    rate.refused(rate.start(10_040), 10_080, 1000, retryAfter(1));

    rate.refused(second, 10_090, 2000, retryAfter(2));

    expect(rate.nextStartAt(10_100)).toBe(11_050);
  });

  it("guesses the next block's end from the probe that ended the last one", () => {
    const { rate } = refusedForWindow(8);
    rate.accepted(rate.start(10_040), 10_080);

    // Sent at 13,000, Retry-After 8: the window ends after 20,000; 10 s after the probe's answer.
    rate.refused(rate.start(13_000), 13_040, 8000, retryAfter(8));

    expect(rate.blocked).toBe(true);
    expect(rate.nextStartAt(13_100)).toBe(20_080);
  });

  it("makes no guess from an HTTP date, whose second may be cut off: the window may end past it", () => {
    const rate = new RateModel();
    rate.accepted(rate.start(0), 40);
    const date = new Headers({ "retry-after": new Date(11_000).toUTCString() });

    rate.refused(rate.start(3010), 3050, 7950, date);

    expect(rate.nextStartAt(3100)).toBe(11_000);
  });
});

describe("RateModel with a cap on requests in flight", () => {
  /**
   * Startup, two in flight at a time, 12 pairs accepted within 0.6 s; then three in flight and
   * the third refused: a cap of 2, the pace not cut. Returns the two still in flight.
   */
  function capped(rate: RateModel): { paceBefore: number; inFlight: Ticket[]; t: number } {
    let t = 0;
    for (let i = 0; i < 12; i++, t += 50) {
      const a = rate.start(t);
      const b = rate.start(t + 20);
      rate.accepted(a, t + 40);
      rate.accepted(b, t + 45);
    }
    const inFlight = [rate.start(t), rate.start(t + 10)];
    const third = rate.start(t + 20);
    const paceBefore = rate.rate;
    rate.refused(third, t + 25, undefined);
    expect(rate.concurrency).toBe(2);
    expect(rate.rate).toBe(paceBefore);
    return { paceBefore, inFlight, t: t + 25 };
  }

  it("holds starts while the cap is full, and its refusals over it cut nothing", () => {
    const rate = new RateModel();
    const { paceBefore, t } = capped(rate);

    expect(rate.nextStartAt(t)).toBeUndefined();
    expect(rate.maxRate).toBe(Number.POSITIVE_INFINITY);
    expect(rate.rate).toBe(paceBefore);
  });

  it("drops the cap at a 429 under it: it was a rate's", () => {
    const rate = new RateModel();
    const { inFlight, t } = capped(rate);

    rate.refused(inFlight[0] as Ticket, t + 10, undefined);

    expect(rate.concurrency).toBe(Number.POSITIVE_INFINITY);
  });

  it("takes no cap from refusals at a level where requests were also accepted", () => {
    const rate = new RateModel();
    let t = 0;
    // Four in flight at a time, accepted, for 0.5 s; then one at level 3 refused.
    for (let i = 0; i < 10; i++, t += 50) {
      const tickets = [0, 5, 10, 15].map((d) => rate.start(t + d));
      for (const ticket of tickets) rate.accepted(ticket, t + 40);
    }
    const refused = [rate.start(t), rate.start(t + 1), rate.start(t + 2)];
    rate.refused(refused[2] as Ticket, t + 40, undefined);

    expect(rate.concurrency).toBe(Number.POSITIVE_INFINITY);
  });
});

describe("parseRateLimitState", () => {
  it("reads the draft's and the X- headers, Reset as seconds or as an epoch time", () => {
    const now = Date.parse("2026-11-23T12:00:00Z");
    expect(
      parseRateLimitState(
        new Headers({
          "ratelimit-limit": "100, 100;w=60",
          "ratelimit-remaining": "7",
          "ratelimit-reset": "30",
        }),
        now,
      ),
    ).toEqual({ limit: 100, remaining: 7, resetMs: 30_000 });
    expect(
      parseRateLimitState(new Headers({ "x-ratelimit-reset": String(now / 1000 + 90) }), now),
    ).toEqual({ resetMs: 90_000 });
    expect(parseRateLimitState(new Headers({ "x-ratelimit-limit": "many" }), now)).toBeUndefined();
    expect(parseRateLimitState(new Headers(), now)).toBeUndefined();
  });
});

/** 75 requests 80 ms apart from `from`, every fifth refused: the highest estimate after the 10th. */
function highestWithEveryFifthRefused(rate: RateModel, from: number): number {
  let highest = 0;
  for (let i = 0; i < 75; i++) {
    const at = from + i * 80;
    const ticket = rate.start(at);
    if (i % 5 === 4) rate.refused(ticket, at + 40, 1000);
    else rate.accepted(ticket, at + 40);
    if (i >= 10) highest = Math.max(highest, rate.maxRate);
  }
  return highest;
}

/** A model whose slow start ended at its 16th request (refused), one sent every `gapMs`. */
function slowStartEndedAt(gapMs: number): RateModel {
  const rate = new RateModel({ requestsPerSecond: 0 });
  for (let i = 0; i < 16; i++) {
    const ticket = rate.start(i * gapMs);
    if (i < 15) rate.accepted(ticket, i * gapMs + 40);
    else rate.refused(ticket, i * gapMs + 40, 1000);
  }
  return rate;
}

/** Two probes above an estimate of 20 refused, then probing above it again. */
function twiceRefusedAbove20(): { rate: RateModel; at: number } {
  const { rate, at } = probingAbove20();
  let t = at;
  for (let probe = 0; probe < 2; probe++) {
    rate.refused(rate.start(t), t + 40, 1000);
    for (t += 300; rate.rate <= rate.maxRate; t += 1000 / 19) rate.accepted(rate.start(t), t + 40);
  }
  return { rate, at: t };
}

/** The estimate raised from 20 by a probe that found `found` a second; the probes refused before. */
function raisedFrom20(found = 30): { rate: RateModel; at: number; failedBefore: number } {
  const { rate, at } = twiceRefusedAbove20();
  let t = at;
  for (const end = t + 1000; t < end; t += 1000 / found) rate.accepted(rate.start(t), t + 40);
  rate.refused(rate.start(t), t + 40, 1000);
  return { rate, at: t + 300, failedBefore: rate.state.raised?.failedProbes ?? -1 };
}

/**
 * A model whose startup ended at an estimate of 20 (60 accepted at 20 a second, then two 429s),
 * then accepted at 19 a second until its pace probes above the estimate; `at`: the next start.
 */
function probingAbove20(): { rate: RateModel; at: number } {
  const rate = new RateModel();
  let t = 0;
  for (; t < 3000; t += 50) rate.accepted(rate.start(t), t + 40);
  rate.refused(rate.start(t), t + 40, 1000);
  rate.refused(rate.start(t + 50), t + 90, 1000);
  for (t += 300; rate.rate <= 20; t += 1000 / 19) rate.accepted(rate.start(t), t + 40);
  return { rate, at: t };
}
