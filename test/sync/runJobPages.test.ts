/** runJobPages: the cloud worker's coarse job, several pages of one list up to a bound. */
import { describe, expect, it } from "vitest";
import { newRequestContext, type RequestContext } from "../../lib/http";
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

/** runJobPages of `connector`'s list from its first page, within `over` of the default bound. */
const readAhead = (connector: Syncer, over: Partial<PagesBound>) =>
  runJobPages(connector, first, newRequestContext(), bound(over));

/**
 * A list of `pages` pages whose jobs ask for the next two ahead (`ctx.prefetched`), as the
 * connectors do; each page's request takes 20 ms. `withChildren`: each page asks for a child job.
 */
function askingAheadConnector(pages: number, withChildren: boolean) {
  const requested: number[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const request = async (page: number): Promise<number> => {
    requested.push(page);
    mostInFlight = Math.max(mostInFlight, ++inFlight);
    await new Promise((resolve) => setTimeout(resolve, 20));
    inFlight--;
    return page;
  };
  const connector: Syncer = {
    name: "test",
    resourceTypes: () => [],
    rootJobs: () => [],
    async runJob(job: Job, ctx: RequestContext): Promise<Page> {
      const page = job.cursor as number;
      const reading = ctx.prefetched?.take<number>(`p${page}`) ?? request(page);
      for (const ahead of [page + 1, page + 2].filter((p) => p <= pages)) {
        ctx.prefetched?.start(`p${ahead}`, () => request(ahead));
      }
      await reading;
      return {
        records: [{ kind: "resource", type: "user", id: `u${page}` } as SnapshotRecord],
        children: withChildren
          ? [{ resourceType: "user", op: "members", parent: { type: "user", id: `${page}` } }]
          : [],
        ...(page < pages ? { next: page + 1 } : {}),
      };
    },
    validate: async () => ({ checks: [] }),
  };
  return { connector, requested, mostInFlight: () => mostInFlight, inFlight: () => inFlight };
}

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

  it("asks for a list's next pages ahead within its pages bound, and none once a page brings children", async () => {
    // Prepare: a list of 20 pages whose jobs ask two pages ahead; a run reads 6 at most.
    const plain = askingAheadConnector(20, false);
    const parents = askingAheadConnector(20, true);

    // Act
    const read = await readAhead(plain.connector, { pages: 6 });
    const withChildren = await readAhead(parents.connector, { pages: 6, children: 1 });

    // Assess: three pages in flight at once, and no page asked for that the run did not read.
    expect(read.pages).toBe(6);
    expect(plain.mostInFlight()).toBe(3);
    expect([...plain.requested].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
    // The first page's children stop the asking ahead: its two pages ahead were already asked for.
    expect(withChildren.pages).toBe(2);
    expect([...parents.requested].sort((a, b) => a - b)).toEqual([1, 2, 3]);
  });

  it("reads the pages already asked for past its records bound, and returns with none in flight", async () => {
    // Prepare: a list of 20 pages of one record whose jobs ask two pages ahead; a run stops
    // asking at 3 records, and once a page brings children.
    const plain = askingAheadConnector(20, false);
    const parents = askingAheadConnector(20, true);

    // Act
    const read = await readAhead(plain.connector, { records: 3 });
    const inFlightAtReturn = plain.inFlight();
    const stopped = await readAhead(parents.connector, { pages: 2 });

    // Assess: the 3rd page's two pages ahead were on their way: read too (a request each), and
    // no page asked for is left unread or running.
    expect(read.pages).toBe(5);
    expect([...plain.requested].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5]);
    expect(inFlightAtReturn).toBe(0);
    expect(stopped.pages).toBe(2);
    expect(parents.inFlight()).toBe(0);
  });
});
