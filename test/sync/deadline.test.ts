/**
 * runLocalSync's deadline, on a fake clock: what happens when it passes, decided without waiting;
 * and what is still on its way when a sync ends.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { newRequestContext } from "../../lib/http";
import { type Job, type Page, runLocalSync, SyncDeadlineError, type Syncer } from "../../lib/sync";
import { makeTempDir } from "../helpers/tempDir";

afterEach(() => {
  vi.useRealTimers();
});

/** Lets the run's file and queue work happen (setImmediate is not faked) until `done`. */
async function until(done: () => boolean): Promise<void> {
  for (let turns = 0; !done(); turns++) {
    if (turns > 10_000) throw new Error("the run never reached the expected state");
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const DEADLINE = { value: 60_000, variable: "CONNECTOR_ACCOUNTING_SYNC_DEADLINE" };

/**
 * A connector whose first page answers at once and whose later pages wait until their request is
 * aborted (a hung upstream): `aborted` counts the requests that saw the abort.
 */
function hangingConnector(syncDeadline = DEADLINE) {
  const seen = { started: 0, aborted: 0 };
  const connector: Syncer = {
    name: "blackline",
    syncDeadline,
    resourceTypes: () => [],
    rootJobs: () => [{ resourceType: "user", op: "list", cursor: 1 }],
    runJob(job: Job, ctx): Promise<Page> {
      const page = job.cursor as number;
      if (page === 1) {
        return Promise.resolve({
          records: [],
          children: [2, 3].map((cursor) => ({ resourceType: "user", op: "list", cursor })),
        });
      }
      seen.started++;
      return new Promise((_resolve, reject) => {
        ctx.signal?.addEventListener("abort", () => {
          seen.aborted++;
          reject(new Error("aborted by the run"));
        });
      });
    },
    validate: async () => ({ checks: [] }),
  };
  return { connector, seen };
}

describe("the sync deadline", () => {
  it("aborts the requests in flight, fails with the variable named, and keeps the previous snapshot", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const dir = await makeTempDir();
    const outFile = join(dir, "s.jsonl");
    await writeFile(outFile, "previous\n");
    const { connector, seen } = hangingConnector();

    const run = runLocalSync({ connector, outFile, concurrency: 4 }).catch((e: unknown) => e);
    await until(() => seen.started === 2);
    expect(seen.aborted).toBe(0);
    await vi.advanceTimersByTimeAsync(59_999);
    expect(seen.aborted).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    const error = await run;

    expect(error).toBeInstanceOf(SyncDeadlineError);
    expect((error as SyncDeadlineError).code).toBe("sync_deadline_exceeded");
    expect((error as Error).message).toMatch(
      /^the sync did not finish within 1m, its deadline \(CONNECTOR_ACCOUNTING_SYNC_DEADLINE\), so it was stopped.* raise CONNECTOR_ACCOUNTING_SYNC_DEADLINE/,
    );
    expect(seen.aborted).toBe(2);
    expect(await readFile(outFile, "utf8")).toBe("previous\n");
    expect(await readdir(dir)).toEqual(["s.jsonl"]);
  });

  it("leaves a caller's own abort signal alone", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const outFile = join(await makeTempDir(), "s.jsonl");
    const { connector, seen } = hangingConnector();
    const caller = new AbortController();

    const run = runLocalSync({
      connector,
      outFile,
      concurrency: 4,
      ctx: newRequestContext({ signal: caller.signal }),
    }).catch((e: unknown) => e);
    await until(() => seen.started === 2);
    caller.abort();
    const error = await run;

    // The caller's stop is its own failure, not the deadline's.
    expect(error).not.toBeInstanceOf(SyncDeadlineError);
    expect(seen.aborted).toBe(2);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("the end of a sync", () => {
  it("stops what its jobs left on their way: a page asked for ahead that no job took", async () => {
    // A job asks for a page ahead (as a list's page jobs do) and the list ends without it.
    let orphan: "on its way" | "stopped" | undefined;
    const connector: Syncer = {
      name: "blackline",
      resourceTypes: () => [],
      rootJobs: () => [{ resourceType: "user", op: "list", cursor: 1 }],
      async runJob(_job: Job, ctx): Promise<Page> {
        ctx.prefetched?.start("page 2", async () => {
          orphan = "on its way";
          await new Promise((resolve) => ctx.signal?.addEventListener("abort", resolve));
          orphan = "stopped";
        });
        return { records: [] };
      },
      validate: async () => ({ checks: [] }),
    };

    await runLocalSync({
      connector,
      outFile: join(await makeTempDir(), "s.jsonl"),
      concurrency: 4,
    });
    await new Promise((resolve) => setImmediate(resolve));

    expect(orphan).toBe("stopped");
  });
});
