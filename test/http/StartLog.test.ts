/** The rate controller's accounting of accepted answers (lib/http/StartLog.ts). */
import { describe, expect, it } from "vitest";
import { StartLog } from "../../lib/http/StartLog";

/** A burst: 100 accepted in the first second; then one every 40 ms (25 a second) to 1.5 s. */
function logOfBurstThenRate(): StartLog {
  const log = new StartLog();
  log.started({ startedAt: 0, pace: 200, level: 1, probe: false, refused: false, slowStart: true });
  for (let t = 0; t < 1000; t += 10) log.accepted(t);
  for (let t = 1040; t <= 1500; t += 40) log.accepted(t);
  return log;
}

describe("StartLog.acceptedRate", () => {
  it("counts over the last second: the burst's end and the rate after it", () => {
    // (500, 1000): 49 of the burst; (1000, 1500]: 12 at 40 ms apart.
    expect(logOfBurstThenRate().acceptedRate(1500)).toBe(49 + 12);
  });

  it("counts from slow start's end once a quarter second has passed, not before", () => {
    const log = logOfBurstThenRate();

    log.measureAcceptedFrom(1000);

    // 12 in the 500 ms since: 24 a second, the rate after the burst.
    expect(log.acceptedRate(1500)).toBe(24);
    // 200 ms after it, too few to tell: the last second, as before.
    expect(log.acceptedRate(1200)).toBe((log.acceptedWithin(1200, 1000) * 1000) / 1000);
  });

  it("counts over the whole window again once a block has begun", () => {
    const log = logOfBurstThenRate();
    log.measureAcceptedFrom(1000);

    log.measureAcceptedFrom(undefined);

    expect(log.acceptedRate(1500)).toBe(49 + 12);
  });
});
