/**
 * `explore NEW --diff OLD` as the built executable runs it: the older snapshot's index built in a
 * worker thread (dist/explore-index-worker.js) beside the shown one's, without its search. The
 * page must answer as the same command run from the sources, where the two are built one after the
 * other in one thread; and the older index, lacking its search, must be rebuilt whole when that
 * snapshot is shown. npm test builds the executable first.
 */
import { spawnSync } from "node:child_process";
import { copyFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { indexPathOf, openExplore, startExploreServer } from "../../lib/explore";
import { SEARCH_REGIONS } from "../../lib/explore/buildIndex";
import { readIndexFile } from "../../lib/explore/indexFile";
import { makeTempDir } from "../helpers/tempDir";
import { startExplore } from "./exploreProcess";
import { writeFixtureSnapshot } from "./fixtureSnapshot";

let made: string;
beforeAll(async () => {
  made = await makeTempDir("ac-explore-worker-");
  await writeFixtureSnapshot(join(made, "new.jsonl"), { users: 300, variant: "new" });
  await writeFixtureSnapshot(join(made, "old.jsonl"), { users: 300, variant: "old" });
});

/** The two snapshots copied into a directory of their own (no index beside them yet). */
async function copies(name: string) {
  const dir = join(made, name);
  await mkdir(dir);
  for (const file of ["new.jsonl", "old.jsonl"]) await copyFile(join(made, file), join(dir, file));
  return { now: join(dir, "new.jsonl"), old: join(dir, "old.jsonl") };
}

/** Which of the search's regions an index file holds. */
function searchRegions(snapshot: string): string[] {
  const file = readIndexFile(indexPathOf(snapshot), { verify: true });
  if (!file) throw new Error(`no whole index beside ${snapshot}`);
  const held = SEARCH_REGIONS.filter((name) => file.size(name) !== undefined);
  file.close();
  return held;
}

const QUERIES = [
  "/api/summary",
  ...["accounts&change=added", "accounts&change=removed", "accounts&change=changed"],
  ...["entitlements&change=added", "entitlements&change=removed"],
  ...["grants&change=added", "grants&change=removed"],
].map((q) => (q.startsWith("/") ? q : `/api/changes?kind=${q}&limit=500`));

describe("explore --diff with the older index built in a worker thread", () => {
  it("answers as the sources do, building one after the other, and keeps the older index without its search", async () => {
    const inThread = await copies("in-thread");
    const { routes } = await openExplore(inThread.now, inThread.old);
    const server = await startExploreServer({ routes, assets: new Map(), port: 0 });
    const apart = await copies("apart");
    const running = await startExplore([apart.now, "--diff", apart.old, "--port", "0"]);
    const get = async (port: number, token: string, query: string) => {
      const answer = await fetch(`http://127.0.0.1:${port}${query}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(answer.status, query).toBe(200);
      return answer.json();
    };
    try {
      const token = new URL(server.url).hash.replace(/^#token=/, "");
      const summary = (await get(running.port, running.token, "/api/summary")) as {
        diff: { counts: Record<string, number> };
      };
      expect(summary.diff.counts.grantsAdded).toBeGreaterThan(0);
      for (const query of QUERIES)
        expect(await get(running.port, running.token, query), query).toEqual(
          await get(server.port, token, query),
        );
    } finally {
      await running.stop();
      server.close();
    }
    expect(searchRegions(apart.now)).toEqual(SEARCH_REGIONS);
    expect(searchRegions(apart.old)).toEqual([]);

    // Shown, the older snapshot's index is rebuilt with its search.
    const shown = await startExplore([apart.old, "--port", "0"]);
    await shown.stop();
    expect(searchRegions(apart.old)).toEqual(SEARCH_REGIONS);
  });

  it("a bad older snapshot: exit 2 naming its fault, as the worker's build found it", async () => {
    const { now, old } = await copies("bad");
    const text = await readFile(old, "utf8");
    await writeFile(old, text.slice(0, text.lastIndexOf('{"kind":"sync_end"')));
    const run = spawnSync(
      process.execPath,
      ["bin/access-connectors.js", "explore", now, "--diff", old],
      {
        encoding: "utf8",
      },
    );
    expect(run.status, run.stderr).toBe(2);
    expect(run.stderr).toContain(`${old} is not a complete snapshot: it has no sync_end`);
    expect((await readdir(dirname(old))).sort()).toEqual([
      "new.jsonl",
      "new.jsonl.explore-index",
      "old.jsonl",
    ]);
  });
});
