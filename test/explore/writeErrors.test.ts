/**
 * Files `explore` cannot write: the built `explore` in a child whose file size limit is 0
 * (`ulimit -f 0`), where the kernel refuses every write to a regular file with EFBIG (Node
 * ignores SIGXFSZ). With no index yet, it exits 2 naming the index file and the cause. With the
 * index built by an earlier start, it serves, and a review decision that cannot be written is
 * answered 500 with the file, the cause and the fix, neither saved nor kept in memory to be
 * written with the next one.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempDir } from "../helpers/tempDir";
import { type RunningExplore, startExplore } from "./exploreProcess";
import { writeFixtureSnapshot } from "./fixtureSnapshot";

let dir: string;
let explore: RunningExplore;

async function api(path: string, init: RequestInit = {}) {
  const response = await fetch(`http://127.0.0.1:${explore.port}${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${explore.token}`,
      ...(init.headers as Record<string, string>),
    },
  });
  return { status: response.status, text: await response.text() };
}

const NO_FILE_WRITES = ["/bin/sh", "-c", 'ulimit -f 0 && exec "$@"', "sh"];

beforeAll(async () => {
  dir = await makeTempDir("ac-explore-write-");
  await writeFixtureSnapshot(join(dir, "new.jsonl"), { users: 20, variant: "new" });
});

afterAll(() => explore?.stop());

describe("explore on a filesystem that refuses its index", () => {
  it("exits 2 naming the index file and the cause, and leaves no part of it behind", () => {
    const [shell = "", ...args] = NO_FILE_WRITES;
    const run = spawnSync(
      shell,
      [...args, process.execPath, "bin/access-connectors.js", "explore", join(dir, "new.jsonl")],
      { encoding: "utf8", timeout: 30_000 },
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(
      /cannot write the review page's index .*new\.jsonl\.explore-index \(EFBIG\)/,
    );
    expect(run.stdout).toBe("");
    expect(readdirSync(dir).sort()).toEqual(["new.jsonl"]);
  });
});

describe("explore on a filesystem that refuses its review file", () => {
  it("answers a decision that cannot be written with the file, the cause and the fix, and keeps nothing", async () => {
    // The index is built by a start that can write, then kept: the next start only reads it.
    await (await startExplore([join(dir, "new.jsonl"), "--port", "0"])).stop();
    explore = await startExplore([join(dir, "new.jsonl"), "--port", "0"], NO_FILE_WRITES);
    const grantId = "team:t2:member:user:u5";
    const answer = await api("/api/review", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grantId, decision: "flag", note: "check" }),
    });

    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.text).error).toMatch(
      /^cannot write the review file .*new\.jsonl\.review\.json: .*EFBIG.*this decision was not saved/,
    );
    expect(existsSync(join(dir, "new.jsonl.review.json"))).toBe(false);
    // Nor is it kept in memory, to be written with the next decision.
    const csv = await api("/api/review/export?format=csv");
    expect(csv.status).toBe(200);
    expect(csv.text).not.toContain(grantId);
  });
});
