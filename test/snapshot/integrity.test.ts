import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { connectorNamed } from "../../lib/connectors";
import { diffSnapshots } from "../../lib/diff";
import { SnapshotIndex } from "../../lib/explore/SnapshotIndex";
import { writeTenantSnapshot } from "../diff/tenantSnapshot";
import { cli } from "../helpers/cli";
import { makeTempDir } from "../helpers/tempDir";

// One bad file, one answer: `diff`, `export` (csv and c1z) and `explore`'s index refuse each
// defect of a complete snapshot with the same message, naming the file and the problem
// (lib/snapshot). Generated snapshots: 12 users in 5 teams, 2 teams a user.

let dir: string;
let good: string;
let lines: string[];

const USERS = 12;
const TEAMS = 5;
/** Records of the good file: its sync_end's counts. */
const RESOURCES = USERS + TEAMS;
const GRANTS = USERS * 2;

beforeAll(async () => {
  dir = await makeTempDir("ac-integrity-");
  good = join(dir, "good.jsonl");
  await writeTenantSnapshot(good, { users: USERS, teams: TEAMS, teamsPerUser: 2 });
  lines = (await readFile(good, "utf8")).trimEnd().split("\n");
});

type Json = Record<string, unknown> & {
  counts: { resource_type: number; resource: number; entitlement: number; grant: number };
};

/** The good file's lines with `copy` (a line number) inserted again before sync_end, and sync_end edited. */
function variant(options: {
  copy?: number;
  edit?: (line: Json) => void;
  end?: (end: Json) => void;
}) {
  const body = lines.slice(0, -1);
  let copyAt: number | undefined;
  if (options.copy !== undefined) {
    const copy = JSON.parse(body[options.copy - 1] as string) as Json;
    options.edit?.(copy);
    body.push(JSON.stringify(copy));
    copyAt = body.length;
  }
  const end = JSON.parse(lines.at(-1) as string) as Json;
  options.end?.(end);
  return { text: `${[...body, JSON.stringify(end)].join("\n")}\n`, copyAt };
}

const firstLineOf = (kind: string) =>
  lines.findIndex((line) => (JSON.parse(line) as { kind: string }).kind === kind) + 1;

/** A defect, and the reason every reader gives (after `{path} is not a complete snapshot: `). */
const defects: [string, () => { text: string; reason: string }][] = [
  [
    "a user twice, the copy disabled, sync_end as it was",
    () => {
      const { text } = variant({
        copy: firstLineOf("resource"),
        edit: (l) => (l.status = "disabled"),
      });
      return {
        text,
        reason: `its sync_end counts ${RESOURCES} resource records but it holds ${RESOURCES + 1}`,
      };
    },
  ],
  [
    "a user twice, the copy disabled, sync_end counting it",
    () => {
      const at = firstLineOf("resource");
      const { text, copyAt } = variant({
        copy: at,
        edit: (l) => (l.status = "disabled"),
        end: (e) => e.counts.resource++,
      });
      const id = (JSON.parse(lines[at - 1] as string) as { id: string }).id;
      return { text, reason: `it holds resource user:${id} twice (lines ${at} and ${copyAt})` };
    },
  ],
  [
    "a grant twice, sync_end counting it",
    () => {
      const at = firstLineOf("grant");
      const { text, copyAt } = variant({ copy: at, end: (e) => e.counts.grant++ });
      const id = (JSON.parse(lines[at - 1] as string) as { id: string }).id;
      return { text, reason: `it holds grant ${id} twice (lines ${at} and ${copyAt})` };
    },
  ],
  [
    "a grant twice, sync_end as it was",
    () => ({
      text: variant({ copy: firstLineOf("grant") }).text,
      reason: `its sync_end counts ${GRANTS} grant records but it holds ${GRANTS + 1}`,
    }),
  ],
  [
    "a resource type twice, sync_end counting it",
    () => {
      const { text, copyAt } = variant({ copy: 2, end: (e) => e.counts.resource_type++ });
      return { text, reason: `it holds resource_type user twice (lines 2 and ${copyAt})` };
    },
  ],
  [
    "sync_end counting a grant too many",
    () => ({
      text: variant({ end: (e) => e.counts.grant++ }).text,
      reason: `its sync_end counts ${GRANTS + 1} grant records but it holds ${GRANTS}`,
    }),
  ],
  [
    "a sync_end of another sync",
    () => ({
      text: variant({ end: (e) => (e.syncId = "sync-other") }).text,
      reason: `its sync_end's syncId "sync-other" is not its sync_start's "sync-1"`,
    }),
  ],
];

const privileged = () => connectorNamed("blackline").privileged;

describe("a snapshot that is not complete: one refusal, whichever command reads it", () => {
  it("the good file passes every reader (no refusal by mistake)", async () => {
    expect((await cli(["diff", good, good, "--json"], {})).code).toBe(0);
    expect((await cli(["export", good, "--format", "csv", join(dir, "good.csv")], {})).code).toBe(
      0,
    );
    expect((await cli(["export", good, "--format", "c1z", join(dir, "good.c1z")], {})).code).toBe(
      0,
    );
    const index = await SnapshotIndex.open(good, privileged);
    expect(index.accounts.length).toBe(USERS);
    expect(index.grantCount).toBe(GRANTS);
  });

  it.each(defects)("%s", async (name, make) => {
    const { text, reason } = make();
    const bad = join(dir, `${name.replace(/\W+/g, "-")}.jsonl`);
    await writeFile(bad, text);
    const message = `${bad} is not a complete snapshot: ${reason}; give a file a sync wrote whole`;

    for (const args of [
      ["diff", good, bad, "--json"],
      ["diff", bad, good],
      ["export", bad, "--format", "csv", join(dir, "out.csv")],
      ["export", bad, "--format", "c1z", join(dir, "out.c1z")],
    ]) {
      const run = await cli(args, {});
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr, args.join(" ")).toBe(`error: ${message}\n`);
      expect(run.stdout, args.join(" ")).toBe("");
    }
    // diff finds it in its sorted runs before it joins them, so no change is printed first (a
    // renamed team sorts before every user and grant): runs of 3 records merged 2 at a time, or
    // read once together.
    const renamed = join(dir, "renamed-team.jsonl");
    await writeFile(renamed, lines.join("\n").replace('"Team 0"', '"Team 0 renamed"'));
    for (const fanIn of [2, 64]) {
      const changes: unknown[] = [];
      await expect(
        diffSnapshots(renamed, bad, (change) => void changes.push(change), {
          runRecords: 3,
          fanIn,
        }),
      ).rejects.toThrow(message);
      expect(changes).toEqual([]);
    }
    const error = await SnapshotIndex.open(bad, privileged).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toBe(message);
  });
});

describe("export: an OUT that cannot be a file is a usage error, before the snapshot is read", () => {
  it("a directory, or a file in a directory that does not exist", async () => {
    const missing = join(dir, "not-read.jsonl");
    const intoDir = await cli(["export", missing, "--format", "csv", `${dir}/`], {});
    expect(intoDir.code).toBe(2);
    expect(intoDir.stderr).toBe(
      `error: OUT: ${dir} is a directory; give the file to write in it, e.g. ${join(dir, "not-read.csv")}\n`,
    );
    const nowhere = join(dir, "no-such-dir", "out.csv");
    const noParent = await cli(["export", good, "--format", "csv", nowhere], {});
    expect(noParent.code).toBe(2);
    expect(noParent.stderr).toContain(
      `OUT: ${nowhere} cannot be written: ${join(dir, "no-such-dir")} does not exist`,
    );
  });
});
