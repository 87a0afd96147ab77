import { describe, expect, it } from "vitest";
import { type InstanceRow, isDue, loadCloudConfig } from "../../lib/cloud";
import { ConfigError } from "../../lib/errors";
import { makeJob } from "../../lib/sync";
import { jobId } from "../../lib/sync/job";

const row = (extra: Partial<InstanceRow>): InstanceRow => ({
  connectorId: "b",
  connector: "blackline",
  intervalSeconds: 3600,
  label: "connected",
  updatedAt: "2026-11-23T00:00:00Z",
  ...extra,
});

describe("cloud runtime, pure parts", () => {
  it("an instance is due when it never completed a sync, or its interval has passed", () => {
    const now = new Date("2026-11-23T12:00:00Z");
    expect(isDue(row({}), now)).toBe(true);
    expect(isDue(row({ currentSyncId: "s" }), now)).toBe(false);
    expect(isDue(row({ lastSuccessStartedAt: "2026-11-23T11:30:00Z" }), now)).toBe(false);
    expect(isDue(row({ lastSuccessStartedAt: "2026-11-23T10:59:00Z" }), now)).toBe(true);
    // A failed run waits an interval from its end, not from the last success.
    expect(
      isDue(
        row({
          lastSuccessStartedAt: "2026-11-22T00:00:00Z",
          lastSyncStatus: "error",
          lastSyncAt: "2026-11-23T11:50:00Z",
        }),
        now,
      ),
    ).toBe(false);
  });

  it("a job's id depends on its content only, not on the order of its keys", () => {
    const run = { syncId: "s", connector: "blackline", connectorId: "b" };
    const a = makeJob(run, { resourceType: "user", op: "list", cursor: { page: 2, seen: 10 } });
    const b = { ...a, cursor: { seen: 10, page: 2 } };
    const c = { ...a, cursor: { page: 3, seen: 10 } };
    expect(jobId(a)).toBe(jobId(b));
    expect(jobId(a)).not.toBe(jobId(c));
  });

  it("a function deployed without its wiring names the missing variables", () => {
    const error = (() => {
      try {
        return loadCloudConfig({ STAGE: "dev", RUNS_TABLE: "r" });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues.map((i) => i.variable)).toEqual(
      expect.arrayContaining(["INSTANCES_TABLE", "SHARDS_BUCKET", "SYNC_JOBS_QUEUE_URL"]),
    );
  });
});
