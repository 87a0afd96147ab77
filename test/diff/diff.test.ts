// `diff OLD NEW [--json]` on generated snapshot pairs: every kind of change, equal snapshots,
// gzip, runs merged in several passes, the removal guard's counts, and bad inputs (exit 2).
import { spawn } from "node:child_process";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { type Change, diffSnapshots } from "../../lib/diff";
import { jsonChange } from "../../lib/diff/jsonReport";
import { digestSnapshotFile, judgeRemoval, type SnapshotDigest } from "../../lib/guard";
import { tempFiles } from "../../lib/snapshot/tempFiles";
import { cli } from "../helpers/cli";
import { makeTempDir } from "../helpers/tempDir";
import { grantId, type TenantSpec, writeTenantSnapshot } from "./tenantSnapshot";

const BASE: TenantSpec = { users: 30, teams: 6, teamsPerUser: 2 };
/** One of each change; user 3 is in teams 3 and 4, user 9 in 3 and 4, team 5 holds users 5, 11, ... */
const EDITS = {
  removeUsers: [3],
  addUsers: 1, // user 30
  disable: [4],
  rename: [5],
  relogin: [6],
  reemail: [7],
  removeTeams: [5],
  addTeams: 1, // team 6
  addGrants: [[0, 6]] as [number, number][],
  removeGrants: [[9, 3]] as [number, number][],
};

let dir: string;
let oldFile: string;
let newFile: string;
beforeAll(async () => {
  dir = await makeTempDir("ac-diff-");
  oldFile = join(dir, "old.jsonl");
  newFile = join(dir, "new.jsonl");
  await writeTenantSnapshot(oldFile, BASE);
  await writeTenantSnapshot(newFile, { ...BASE, syncId: "sync-2", edits: EDITS, reverse: true });
});

const jsonLines = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** The grants of team `t` in BASE. */
const membersOf = (t: number) =>
  Array.from({ length: BASE.users }, (_, u) => u).filter((u) =>
    [0, 1].some((k) => (u * 7 + k * 13) % BASE.teams === t),
  );

describe("diff --json", () => {
  it("lists every kind of change, one a line in key order, then diff_end; exit 1", async () => {
    const run = await cli(["diff", oldFile, newFile, "--json"], {});
    expect(run.stderr).toBe("");
    expect(run.code).toBe(1);
    const lines = jsonLines(run.stdout);
    const end = lines.pop();
    const byId = new Map(lines.map((line) => [`${line.kind} ${line.id}`, line]));
    expect(byId.get("resource user:3")).toEqual({
      change: "removed",
      kind: "resource",
      id: "user:3",
    });
    expect(byId.get("resource user:30")).toMatchObject({ change: "added" });
    expect(byId.get("resource user:4")).toEqual({
      change: "changed",
      kind: "resource",
      id: "user:4",
      fields: { status: { before: "enabled", after: "disabled" } },
    });
    expect(byId.get("resource user:5")?.fields).toEqual({
      displayName: { before: "User 5", after: "Renamed 5" },
    });
    expect(byId.get("resource user:6")?.fields).toEqual({
      login: { before: "user6@example.com", after: "new6@example.com" },
      emails: { before: ["user6@example.com"], after: ["new6@example.com"] },
    });
    expect(byId.get("resource user:7")?.fields).toEqual({
      emails: { before: ["user7@example.com"], after: ["user7@example.com", "alt7@example.com"] },
    });
    expect(byId.get("resource team:5")).toMatchObject({ change: "removed" });
    expect(byId.get("resource team:6")).toMatchObject({ change: "added" });
    expect(byId.get("entitlement team:5:member")).toMatchObject({ change: "removed" });
    expect(byId.get("entitlement team:6:member")).toMatchObject({ change: "added" });
    expect(byId.get(`grant ${grantId(0, 6)}`)).toMatchObject({ change: "added" });
    expect(byId.get(`grant ${grantId(9, 3)}`)).toMatchObject({ change: "removed" });
    // User 3's grants and team 5's go with them; user 30's come with it.
    const removedGrants = lines.filter((l) => l.kind === "grant" && l.change === "removed");
    const expectedRemoved = new Set([
      ...[3, 4].map((t) => grantId(3, t)),
      ...membersOf(5)
        .filter((u) => u !== 3)
        .map((u) => grantId(u, 5)),
      grantId(9, 3),
    ]);
    expect(new Set(removedGrants.map((l) => l.id))).toEqual(expectedRemoved);
    const addedGrants = lines.filter((l) => l.kind === "grant" && l.change === "added");
    expect(addedGrants.map((l) => l.id).sort()).toEqual(
      [grantId(0, 6), grantId(30, 0), grantId(30, 1)].sort(),
    );
    // Resources, then entitlements, then grants, each kind sorted by its key.
    const rank = lines.map((l) => ["resource", "entitlement", "grant"].indexOf(l.kind as string));
    expect(rank).toEqual([...rank].sort());
    expect(end).toEqual({
      kind: "diff_end",
      equal: false,
      counts: {
        resource: { added: 2, removed: 2, changed: 4 },
        entitlement: { added: 1, removed: 1 },
        grant: { added: 3, removed: expectedRemoved.size },
        accounts: { added: 1, removed: 1, enabled: 0, disabled: 1, changed: 3 },
      },
    });
    expect(tempFiles()).toEqual([]);
  });

  it("two equal snapshots (one gzip, its lines in another order): diff_end alone, exit 0", async () => {
    const gz = join(dir, "same.jsonl.gz");
    await writeTenantSnapshot(gz, { ...BASE, syncId: "sync-3", reverse: true });
    const run = await cli(["diff", oldFile, gz, "--json"], {});
    expect(run.code).toBe(0);
    expect(jsonLines(run.stdout)).toEqual([
      {
        kind: "diff_end",
        equal: true,
        counts: {
          resource: { added: 0, removed: 0, changed: 0 },
          entitlement: { added: 0, removed: 0 },
          grant: { added: 0, removed: 0 },
          accounts: { added: 0, removed: 0, enabled: 0, disabled: 0, changed: 0 },
        },
      },
    ]);
    const human = await cli(["diff", gz, oldFile], {});
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^blackline: no differences\n/);
  });

  it("gzip on both sides gives the same changes as plain files", async () => {
    const oldGz = join(dir, "old.jsonl.gz");
    const newGz = join(dir, "new.jsonl.gz");
    await writeFile(oldGz, gzipSync(await readFile(oldFile)));
    await writeFile(newGz, gzipSync(await readFile(newFile)));
    const plain = await cli(["diff", oldFile, newFile, "--json"], {});
    const gzip = await cli(["diff", oldGz, newGz, "--json"], {});
    expect(gzip.code).toBe(1);
    expect(gzip.stdout).toBe(plain.stdout);
  });

  it("runs merged in several passes give the same changes as one run a file", async () => {
    const collect = async (options: { runRecords?: number; fanIn?: number }) => {
      const changes: Change[] = [];
      const result = await diffSnapshots(oldFile, newFile, (c) => void changes.push(c), options);
      return { changes: changes.map(jsonChange), counts: result.counts, runs: result.old.runs };
    };
    const whole = await collect({});
    // 7 records a run: 15 runs of the old file's 104 records, merged 2 at a time in 4 passes.
    const pieces = await collect({ runRecords: 7, fanIn: 2 });
    expect(whole.runs).toHaveLength(1);
    expect(pieces.changes).toEqual(whole.changes);
    expect(pieces.counts).toEqual(whole.counts);
  });

  it("counts the removals the removal guard counts from its digests", async () => {
    const shrunk = join(dir, "shrunk.jsonl");
    const removeUsers = Array.from({ length: 12 }, (_, i) => i * 2);
    await writeTenantSnapshot(shrunk, { ...BASE, syncId: "s", edits: { removeUsers } });
    const digest = async (path: string) => {
      const read = await digestSnapshotFile(path);
      if (!("digest" in read)) throw new Error(read.notSnapshot);
      return read.digest as SnapshotDigest;
    };
    const verdict = judgeRemoval(await digest(oldFile), await digest(shrunk), 30);
    const result = await diffSnapshots(oldFile, shrunk, () => undefined);
    expect(result.removal).toEqual({ users: verdict.users, grants: verdict.grants });
    expect(verdict).toMatchObject({ held: true, users: { previous: 30, removed: 12 } });
    const human = await cli(["diff", oldFile, shrunk], {});
    expect(human.stdout).toContain(
      `guard         it removes 12 of 30 users (40%) and ${verdict.grants?.removed} of 60 grants (40%); the limit is 30%: a sync would hold this snapshot (exit 4)\n`,
    );
  });
});

describe("diff, the human report", () => {
  it("a short summary, then the changes grouped", async () => {
    const run = await cli(["diff", oldFile, newFile], { CONNECTOR_MAX_REMOVAL_PERCENT: "off" });
    expect(run.code).toBe(1);
    const [summary, ...groups] = run.stdout.split("\n\n");
    expect(summary).toBe(
      [
        "blackline: the snapshots differ",
        `  old  ${oldFile}: sync sync-1 of 2026-11-25T10:00:00Z`,
        `  new  ${newFile}: sync sync-2 of 2026-11-25T10:00:00Z`,
        "accounts      30 -> 30: 1 added, 1 removed, 1 disabled, 0 enabled, 3 changed",
        "resources     1 added, 1 removed, 0 changed (not accounts)",
        "entitlements  1 added, 1 removed",
        "grants        60 -> 50: 3 added, 13 removed",
        "guard         it removes 1 of 30 users (3.3%) and 13 of 60 grants (21.7%); the guard is off: a sync would publish it",
      ].join("\n"),
    );
    expect(groups.map((g) => g.split("\n")[0])).toEqual([
      "Accounts added (1)",
      "Accounts removed (1)",
      "Accounts disabled (1)",
      "Accounts changed (display name, login, emails) (3)",
      "Other resources (teams, roles, member types) added, removed or changed (2)",
      "Entitlements added and removed (2)",
      "Grants added and removed, by entitlement (16)",
    ]);
    expect(groups[0]).toContain("  + user:30  User 30 (user30@example.com)");
    expect(groups[2]).toContain("  user:4  User 4 (user4@example.com) [disabled]");
    expect(groups[3]).toContain('  ~ user:5  displayName "User 5" -> "Renamed 5"');
    // Grants under their entitlement: team 3 loses user 3 and user 9.
    expect(groups[6]).toMatch(/\n {2}team:3:member\n {4}- user:3\n {4}- user:9\n/);
    expect(groups[6]).toMatch(/\n {2}team:6:member\n {4}\+ user:0\n/);
  });
});

describe("diff: bad input exits 2 naming the file and what is wrong", () => {
  const lines = async () => (await readFile(oldFile, "utf8")).trimEnd().split("\n");

  it.each([
    [
      "a snapshot without its sync_end",
      async (path: string) => writeFile(path, `${(await lines()).slice(0, -1).join("\n")}\n`),
      "is not a complete snapshot: it has no sync_end (an incomplete snapshot)",
    ],
    [
      "a truncated gzip file",
      async (path: string) => {
        const gz = gzipSync(await readFile(oldFile));
        await writeFile(path, gz.subarray(0, gz.length - 40));
      },
      "is not a complete snapshot: its gzip data is damaged or cut short (Z_BUF_ERROR)",
    ],
    [
      "not JSON",
      (path: string) => writeFile(path, "my notes\n"),
      "is not a complete snapshot: line 1 is not a snapshot record (not JSON)",
    ],
    [
      "a record with a field of the wrong type",
      async (path: string) => {
        const all = await lines();
        all[3] = all[3]?.replace(/"emails":\[[^\]]*\]/, '"emails":"a@example.com"') ?? "";
        await writeFile(path, `${all.join("\n")}\n`);
      },
      "is not a complete snapshot: line 4 is not a snapshot record (a resource's user.emails: Invalid input: expected array, received string)",
    ],
    ["a missing file", async () => undefined, "cannot be read: no such file"],
  ])("%s", async (_, write, message) => {
    const bad = join(await makeTempDir("ac-diff-bad-"), "bad.jsonl");
    await write(bad);
    for (const args of [
      [oldFile, bad],
      [bad, oldFile, "--json"],
    ]) {
      const run = await cli(["diff", ...args], {});
      expect(run.code).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr).toContain(`error: ${bad} ${message}`);
    }
    expect(tempFiles()).toEqual([]);
  });

  it("two connectors", async () => {
    const valimail = join(dir, "valimail.jsonl");
    await writeTenantSnapshot(valimail, { ...BASE, connector: "valimail" });
    const run = await cli(["diff", oldFile, valimail], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `error: ${valimail} is a snapshot of valimail and ${oldFile} one of blackline: diff compares two syncs of one connector\n`,
    );
  });
});

describe("bin/access-connectors.js diff, as a user runs it", () => {
  it("prints the JSON changes and exits 1; leaves no temporary file", async () => {
    const child = spawn("bin/access-connectors.js", ["diff", oldFile, newFile, "--json"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => (stdout += text));
    child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
    const code = await new Promise<number | null>((done) => child.on("close", done));
    expect(stderr).toBe("");
    expect(code).toBe(1);
    const direct = await cli(["diff", oldFile, newFile, "--json"], {});
    expect(stdout).toBe(direct.stdout);
    const left = (await readdir(tmpdir())).filter((name) =>
      name.startsWith(`access-connectors-diff-${child.pid}-`),
    );
    expect(left).toEqual([]);
  });
});

describe("diff that cannot do its work", () => {
  it("exits 2, not 1 (which says different), naming the temporary directory it cannot make", async () => {
    // TMPDIR below a file: no directory can be made there (ENOTDIR).
    const child = spawn("bin/access-connectors.js", ["diff", oldFile, newFile], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, TMPDIR: "/dev/null/nowhere" },
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
    const code = await new Promise<number | null>((done) => child.on("close", done));
    expect(code).toBe(2);
    expect(stderr).toContain("error: cannot write a temporary file of diff /dev/null/nowhere/");
  });
});
