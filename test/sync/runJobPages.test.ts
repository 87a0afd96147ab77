/** runJobPages: the cloud worker's coarse job, several pages of one list up to a bound. */
import { describe, expect, it } from "vitest";
import { newRequestContext } from "../../lib/http";
import type { SnapshotRecord } from "../../lib/snapshot";
import {
  type Job,
  makeJob,
  type Page,
  type PagesBound,
  runJobPages,
  type Syncer,
} from "../../lib/sync";

const run = { syncId: "s", connector: "test", connectorId: "test-1" };

/** A list of `pages` pages of `perPage` records each, every page asking for one child job. */
function listConnector(pages: number, perPage: number, failAt?: number) {
  const asked: number[] = [];
  const connector: Syncer = {
    name: "test",
    resourceTypes: () => [],
    rootJobs: () => [{ resourceType: "user", op: "list", cursor: 1 }],
    async runJob(job: Job): Promise<Page> {
      const page = job.cursor as number;
      asked.push(page);
      if (page === failAt) throw new Error(`page ${page} failed`);
      const records = Array.from(
        { length: perPage },
        (_, n) => ({ kind: "resource", type: "user", id: `u${page}-${n}` }) as SnapshotRecord,
      );
      return {
        records,
        children: [
          { resourceType: "user", op: "members", parent: { type: "user", id: `${page}` } },
        ],
        ...(page < pages ? { next: page + 1 } : {}),
      };
    },
    validate: async () => ({ checks: [] }),
  };
  return { connector, asked };
}

const bound = (over: Partial<PagesBound> = {}): PagesBound => ({
  records: 1_000,
  pages: 100,
  children: 100,
  timeForAnother: () => true,
  ...over,
});

const first = makeJob(run, { resourceType: "user", op: "list", cursor: 1 });

describe("runJobPages", () => {
  it("reads a list's pages until its records bound, and hands the next page on", async () => {
    const { connector, asked } = listConnector(10, 30);

    const result = await runJobPages(
      connector,
      first,
      newRequestContext(),
      bound({ records: 100 }),
    );

    // 4 pages reach 120 records, past 100: no fifth page is read.
    expect(asked).toEqual([1, 2, 3, 4]);
    expect(result.pages).toBe(4);
    expect(result.records).toHaveLength(120);
    expect(result.next).toEqual({ ...first, cursor: 5 });
    // Every page's child, then the page not read.
    expect(result.followUps.map((j) => [j.op, j.cursor ?? j.parent?.id])).toEqual([
      ["members", "1"],
      ["members", "2"],
      ["members", "3"],
      ["members", "4"],
      ["list", 5],
    ]);
  });

  it("stops at its pages, children and time bounds, and at the list's end", async () => {
    const ctx = newRequestContext();
    const byPages = await runJobPages(
      listConnector(10, 1).connector,
      first,
      ctx,
      bound({ pages: 2 }),
    );
    const byChildren = await runJobPages(
      listConnector(10, 1).connector,
      first,
      ctx,
      bound({ children: 2 }),
    );
    const byTime = await runJobPages(
      listConnector(10, 1).connector,
      first,
      ctx,
      bound({ timeForAnother: () => false }),
    );
    const whole = await runJobPages(listConnector(3, 1).connector, first, ctx, bound());

    expect([byPages.pages, byChildren.pages, byTime.pages, whole.pages]).toEqual([2, 3, 1, 3]);
    expect(byPages.next?.cursor).toBe(3);
    expect(whole.next).toBeUndefined();
    expect(whole.followUps.map((j) => j.op)).toEqual(["members", "members", "members"]);
  });

  it("hands a later page that fails on as a job, and fails with the first page", async () => {
    const failing = listConnector(10, 1, 3);
    const result = await runJobPages(failing.connector, first, newRequestContext(), bound());

    expect(failing.asked).toEqual([1, 2, 3]);
    expect(result.pages).toBe(2);
    expect(result.next?.cursor).toBe(3);
    await expect(
      runJobPages(listConnector(10, 1, 1).connector, first, newRequestContext(), bound()),
    ).rejects.toThrow("page 1 failed");
  });
});
