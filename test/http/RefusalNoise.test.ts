/**
 * RefusalNoise alone: which refused shares it takes for noise (`AdaptiveRate.ts`, its header),
 * from answers fed in directly. `AdaptiveRate` and `limiterKinds.test.ts` test it in the
 * controller; these are the bounds that keep a wrong verdict from becoming a storm of 429s.
 */
import { describe, expect, it } from "vitest";
import { RefusalNoise } from "../../lib/http/RefusalNoise";
import type { StartTicket } from "../../lib/http/rateTypes";

function ticket(startedAt: number, pace: number): StartTicket {
  return { startedAt, pace, level: 1, probe: false, slowStart: false, refused: false };
}

/** Answers of requests started at `at`: accepted first, then refused (counted from an accepted one). */
function answer(noise: RefusalNoise, at: number, pace: number, accepted: number, refused: number) {
  for (let i = 0; i < accepted; i++) noise.accepted(ticket(at, pace));
  for (let i = 0; i < refused; i++) noise.refused(ticket(at, pace), false);
}

/**
 * Noise learned at 2,000 ms: 40% refused at 50 a second, and a cut to 25 that left `after` of its
 * 13 answers refused (a limit at 25 would refuse none).
 */
function learned(after: number): RefusalNoise {
  const noise = new RefusalNoise();
  answer(noise, 0, 50, 30, 20);
  noise.judge(1000, 50, 50, true);
  answer(noise, 1000, 25, 13 - after, after);
  expect(noise.judge(2000, 25, 50, true).revertTo).toBeDefined();
  return noise;
}

describe("RefusalNoise", () => {
  it("takes a share that did not fall after a cut large enough to tell for noise", () => {
    const noise = new RefusalNoise();
    answer(noise, 0, 50, 30, 20);
    expect(noise.judge(1000, 50, 50, true)).toEqual({ follows: true });
    // Cut to 25 a second: a limit would refuse none now; 40% still are.
    answer(noise, 1000, 25, 9, 6);

    const verdict = noise.judge(2000, 25, 50, true);

    expect(verdict.follows).toBe(false);
    expect(verdict.revertTo).toEqual({ pace: 50, maxRate: 50, share: 0.4 });
  });

  it("judges no cut too small to change a limit's share (97 to 95 a second, 48% refused either way)", () => {
    // Against a bucket of 50/s, the same share after so small a cut was read as noise and the pace
    // went back to 97 with slow start's edge of 158: 1,140 429s in 12 s on the fake clock, in a
    // variant of the rate control that allowed more starts within a second.
    const noise = new RefusalNoise();
    answer(noise, 0, 97, 26, 24);
    noise.judge(1000, 97, 158, true);
    answer(noise, 1000, 95, 13, 12);

    const verdict = noise.judge(2000, 95, 98, true);

    expect(verdict).toEqual({ follows: true });
    expect(noise.noise()).toBe(false);
  });

  it("never tolerates half the answers refused, whatever share it learned", () => {
    // Learned: 5 of 13 (38%). Twice that would tolerate 77%.
    const noise = learned(5);
    answer(noise, 2000, 50, 4, 3);
    expect(noise.noise()).toBe(true);
    answer(noise, 2000, 50, 0, 5);

    expect(noise.noise()).toBe(false);
  });

  it("takes nothing but refusals after a verdict of noise for no noise (a quota spent, an outage)", () => {
    const noise = learned(5);
    for (let i = 0; i < 5; i++) noise.refused(ticket(2000, 50), false);
    expect(noise.noise()).toBe(true);
    for (let i = 0; i < 5; i++) noise.refused(ticket(2000, 50), false);

    expect(noise.noise()).toBe(false);
  });

  it("counts no refusal before the first answer accepted since a cut: a window spent before it", () => {
    const noise = new RefusalNoise();
    answer(noise, 0, 16, 30, 20);
    noise.judge(1000, 16, 17, true);
    // Sent after the cut, refused until the spent window ends, then a window's worth accepted.
    for (let i = 0; i < 4; i++) noise.refused(ticket(1000, 10), false);
    answer(noise, 1000, 10, 12, 0);

    expect(noise.judge(2200, 10, 17, true)).toEqual({ follows: true });
  });
});
