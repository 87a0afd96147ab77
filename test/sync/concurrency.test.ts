/** runLocalSync's concurrency: how many jobs ask the upstream at once, and the order of a list's pages. */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type Job, type Page, runLocalSync, type Syncer } from "../../lib/sync";
import { makeTempDir } from "../helpers/tempDir";

/** Resolves after `turns` turns of the event loop (setImmediate), so jobs end in a mixed order. */
const turns = async (count: number) => {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
};

/**
 * A connector whose jobs answer with `answer`, starting at the first page of the user list; counts
 * the jobs inside `runJob` at once (a job's request phase).
 */
function countingConnector(answer: (job: Job) => Promise<Page>) {
  const seen = { inside: 0, most: 0 };
  const connector: Syncer = {
    name: "blackline",
    resourceTypes: () => [],
    rootJobs: () => [{ resourceType: "user", op: "list", cursor: 1 }],
    async runJob(job: Job): Promise<Page> {
      seen.inside++;
      seen.most = Math.max(seen.most, seen.inside);
      try {
        return await answer(job);
      } finally {
        seen.inside--;
      }
    },
    validate: async () => ({ checks: [] }),
  };
  return { connector, seen };
}

/**
 * A list of `pages` pages read one after another, each page with `children` member jobs that take
 * a few turns each; `listPages` are the list's pages in the order they were asked for.
 */
function listWithMembers(pages: number, children: number) {
  const listPages: number[] = [];
  const { connector, seen } = countingConnector(async (job) => {
    const at = job.cursor as number;
    if (job.op !== "list") {
      await turns(1 + (at % 5));
      return { records: [] };
    }
    listPages.push(at);
    await turns(1);
    return {
      records: [{ kind: "resource", type: "user", id: `u${at}`, displayName: `User ${at}` }],
      ...(at < pages ? { next: at + 1 } : {}),
      children: Array.from({ length: children }, (_, i) => ({
        resourceType: "user",
        op: "members",
        cursor: at * 1000 + i,
        parent: { type: "user", id: `u${at}` },
      })),
    };
  });
  return { connector, seen, listPages };
}

describe("runLocalSync's concurrency", () => {
  it.each([1, 3, 16])(
    "keeps at most %i jobs asking at once, and reads a list's pages in order",
    async (concurrency) => {
      const outFile = join(await makeTempDir(), "s.jsonl");
      const { connector, seen, listPages } = listWithMembers(30, 20);

      const { summary } = await runLocalSync({ connector, outFile, concurrency });

      expect(seen.most).toBeLessThanOrEqual(concurrency);
      if (concurrency > 1) expect(seen.most).toBeGreaterThan(1);
      expect(listPages).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      expect(summary.jobs).toBe(30 + 30 * 20);
      expect(summary.counts.resource).toBe(30);
      expect((await readFile(outFile, "utf8")).split("\n").filter(Boolean)).toHaveLength(32);
    },
  );

  it("holds at most two pages of a list when its pages come faster than they are written", async () => {
    const outFile = join(await makeTempDir(), "s.jsonl");
    const RECORDS = 10_000;
    let returned = 0;
    let written = 0;
    let most = 0;
    const { connector } = countingConnector(async (job) => {
      const at = job.cursor as number;
      // Pages whose records are not yet written (progress counts a page's records once written).
      most = Math.max(most, returned - written);
      returned++;
      return {
        records: Array.from({ length: RECORDS }, (_, i) => ({
          kind: "resource" as const,
          type: "user",
          id: `u${at}-${i}`,
          displayName: `User ${at} ${i} ${"x".repeat(60)}`,
        })),
        ...(at < 40 ? { next: at + 1 } : {}),
      };
    });

    const { summary } = await runLocalSync({
      connector,
      outFile,
      concurrency: 4,
      onProgress: (p) => {
        written = p.records / RECORDS;
      },
    });

    expect(summary.counts.resource).toBe(40 * RECORDS);
    // One page asked for and one waiting for its write (progress counts a page once written).
    expect(most).toBeLessThanOrEqual(2);
  });

  it("starts only a list's next page out of turn, not children that happen to be lists too", async () => {
    const outFile = join(await makeTempDir(), "s.jsonl");
    const { connector, seen } = countingConnector(async (job) => {
      await turns(2);
      const at = job.cursor as number;
      if (at >= 1_000) return { records: [] };
      // Each page of the list asks for ten sub-lists (nested groups, say): user/list jobs too.
      return {
        records: [],
        ...(at < 5 ? { next: at + 1 } : {}),
        children: Array.from({ length: 10 }, (_, i) => ({
          resourceType: "user",
          op: "list",
          cursor: at * 1_000 + i,
        })),
      };
    });

    const { summary } = await runLocalSync({ connector, outFile, concurrency: 2 });

    expect(summary.jobs).toBe(5 + 5 * 10);
    expect(seen.most).toBeLessThanOrEqual(2);
  });
});
