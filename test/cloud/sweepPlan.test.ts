/**
 * The scheduler's sweep, its pure parts: the order it sends instances in, and how it stops at its
 * deadline. The clock is a counter the sends move, never the wall clock; the sends are recorded,
 * not sent (the AWS tier sends them to moto's queue and runs the checks).
 */
import { describe, expect, it } from "vitest";
import type { InstanceRow } from "../../lib/cloud";
import { sendInOrder, sweepOrder } from "../../lib/cloud/sweepPlan";

const now = new Date("2026-11-29T12:00:00Z");
const hoursAgo = (hours: number) => new Date(now.getTime() - hours * 3_600_000).toISOString();
const row = (connectorId: string, extra: Partial<InstanceRow> = {}): InstanceRow => ({
  connectorId,
  connector: "blackline",
  intervalSeconds: 3600,
  label: "connected",
  updatedAt: hoursAgo(48),
  ...extra,
});
const lastSuccess = (hours: number) => ({
  lastSuccessStartedAt: hoursAgo(hours),
  lastSyncStatus: "complete" as const,
  lastSyncAt: hoursAgo(hours),
});

describe("the sweep's order", () => {
  it("sends the due instances the most overdue first, not in id order, then the current runs the oldest first", () => {
    const rows = [
      row("a-late-by-1h", lastSuccess(2)),
      row("b-not-due", lastSuccess(0.5)),
      row("c-never-synced", { updatedAt: hoursAgo(1) }),
      row("d-late-by-5h", lastSuccess(6)),
      row("e-never-synced-earlier", { updatedAt: hoursAgo(3) }),
      row("f-running-recent", { currentSyncId: "s1", currentStartedAt: hoursAgo(0.1) }),
      row("g-running-old", { currentSyncId: "s2", currentStartedAt: hoursAgo(2) }),
      // Failed 10 minutes ago: due an interval after that failure, not after its last success.
      row("h-failed-recently", {
        lastSuccessStartedAt: hoursAgo(30),
        lastSyncStatus: "error",
        lastSyncAt: hoursAgo(1 / 6),
      }),
    ];

    expect(sweepOrder(rows, now)).toEqual({
      starts: ["e-never-synced-earlier", "c-never-synced", "d-late-by-5h", "a-late-by-1h"],
      checks: ["g-running-old", "f-running-recent"],
    });
  });
});

describe("the sweep's sends", () => {
  const ids = Array.from({ length: 950 }, (_, i) => `i${String(i).padStart(3, "0")}`);

  it("sends everything in batches of a hundred (ten messages of ten), in order, when the deadline is far", async () => {
    const batches: string[][] = [];
    let inFlight = 0;
    let mostInFlight = 0;
    const outcome = await sendInOrder(
      ids,
      async (batch) => {
        inFlight++;
        mostInFlight = Math.max(mostInFlight, inFlight);
        await Promise.resolve();
        batches.push([...batch]);
        inFlight--;
      },
      { deadlineAt: Number.POSITIVE_INFINITY, inFlight: 4 },
    );

    expect(outcome).toEqual({ sent: ids, left: [], failed: [] });
    expect(batches.map((b) => b.length)).toEqual([100, 100, 100, 100, 100, 100, 100, 100, 100, 50]);
    expect(mostInFlight).toBe(4);
  });

  it("starts no batch once its deadline has come, and leaves the rest, in order, for the next sweep", async () => {
    let clock = 0;
    const outcome = await sendInOrder(
      ids,
      async () => {
        clock += 1;
      },
      { deadlineAt: 3, inFlight: 2, now: () => clock },
    );

    // Each send moves the clock by one: batches start at 0, 1 and 2; at 3 none does.
    expect(outcome.sent).toEqual(ids.slice(0, 300));
    expect(outcome.left).toEqual(ids.slice(300));
    expect(outcome.failed).toEqual([]);
  });

  it("reports a batch SQS refused, and sends the others", async () => {
    const outcome = await sendInOrder(
      ids.slice(0, 300),
      async (batch) => {
        if (batch.includes("i100")) throw new Error("SQS refused 10 of 10 instance-check messages");
      },
      { deadlineAt: Number.POSITIVE_INFINITY, inFlight: 2 },
    );

    expect(outcome.sent).toEqual([...ids.slice(0, 100), ...ids.slice(200, 300)]);
    expect(outcome.failed.map((f) => f.connectorId)).toEqual(ids.slice(100, 200));
    expect(outcome.failed[0]?.error).toBe("SQS refused 10 of 10 instance-check messages");
  });
});
