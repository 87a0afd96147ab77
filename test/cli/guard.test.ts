// The mass-deletion guard in the CLI, end to end against the BlackLine simulator: a tenant that
// shrinks between two syncs (the same seed with fewer users) is held, --out keeps the previous
// snapshot, and `release` moves the held one onto it.
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BlacklineSimulator, startBlacklineSimulator } from "../../lib/simulators/blackline";
import { cli } from "../helpers/cli";
import { readSnapshot } from "../helpers/snapshot";
import { makeTempDir } from "../helpers/tempDir";

const SIZE = { teams: 20, roles: 6 };
let full: BlacklineSimulator;
let shrunk: BlacklineSimulator;
beforeAll(async () => {
  full = await startBlacklineSimulator({ seed: 5, size: { users: 300, ...SIZE } });
  // Users 1000..1199 of the same seed: 100 of the 300 users are gone (33.3%).
  shrunk = await startBlacklineSimulator({ seed: 5, size: { users: 200, ...SIZE } });
});
afterAll(async () => {
  await full.close();
  await shrunk.close();
});

const envOf = (sim: BlacklineSimulator, extra: Record<string, string> = {}) => ({
  ...sim.env(),
  CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0",
  ...extra,
});
const sync = (sim: BlacklineSimulator, out: string, args: string[] = [], extra = {}) =>
  cli(["sync", "blackline", "--out", out, ...args], envOf(sim, extra));
const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );
const syncIdOf = async (path: string) => (await readSnapshot(path))[0]?.syncId;

describe("sync: the removal guard", () => {
  it("a first sync has nothing to compare; the same tenant again removes nothing", async () => {
    const out = join(await makeTempDir(), "bl.jsonl");
    const first = await sync(full, out, ["--json"]);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({
      snapshot: out,
      guard: { held: false, basis: "first", limit: 30 },
    });
    const again = await sync(full, out);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/guard {7}it removes 0 of 300 users \(0%\) and 0 of \d+ grants/);
    expect(await exists(join(out, "..", "bl.held.jsonl"))).toBe(false);
  });

  it("holds a tenant that lost a third of its users: exit 4, --out unchanged, release moves it", async () => {
    const dir = await makeTempDir();
    const out = join(dir, "snap.jsonl.gz");
    const held = join(dir, "snap.held.jsonl.gz");
    expect((await sync(full, out)).code).toBe(0);
    const before = await readFile(out);

    const shrinking = await sync(shrunk, out);
    expect(shrinking.code).toBe(4);
    expect(shrinking.stderr).toMatch(
      /(^|\n)error: the new snapshot was held: it removes 100 of 300 users \(33\.3%\) and \d[\d,]* of [\d,]+ grants \([\d.]+%\); the limit is 30% \(CONNECTOR_MAX_REMOVAL_PERCENT\)\. /,
    );
    expect(shrinking.stderr).toContain(`${out} is unchanged; the new snapshot is at ${held}.`);
    expect(shrinking.stderr).toContain(
      `If these removals are real, publish it as it is: access-connectors release blackline --out ${out}.`,
    );
    expect(shrinking.stdout).toContain(`snapshot    ${held}`);
    expect(shrinking.stdout).toContain("guard       HELD: it removes 100 of 300 users");
    expect(await readFile(out)).toEqual(before);
    const heldLines = await readSnapshot(held); // gzip, as --out asked
    expect(heldLines.filter((l) => l.kind === "resource" && l.type === "user")).toHaveLength(200);
    const heldSyncId = heldLines[0]?.syncId;

    const release = await cli(["release", "blackline", "--out", out], {});
    expect(release.code).toBe(0);
    expect(release.stdout).toBe(
      `released blackline sync ${heldSyncId}: ${held} is now ${out} (200 users, ${heldLines.filter((l) => l.kind === "grant").length} grants)\n`,
    );
    expect(await syncIdOf(out)).toBe(heldSyncId);
    expect(await exists(held)).toBe(false);

    const twice = await cli(["release", "blackline", "--out", out], {});
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain(`--out: nothing is held for ${out} (no file at ${held})`);
  });

  it("a later sync within the limit replaces the held snapshot", async () => {
    const dir = await makeTempDir();
    const out = join(dir, "bl.jsonl");
    expect((await sync(full, out)).code).toBe(0);
    expect((await sync(shrunk, out)).code).toBe(4);
    expect(await exists(join(dir, "bl.held.jsonl"))).toBe(true);
    const recovered = await sync(full, out);
    expect(recovered.code).toBe(0);
    expect(await exists(join(dir, "bl.held.jsonl"))).toBe(false);
    expect((await readSnapshot(out)).filter((l) => l.type === "user")).toHaveLength(300);
  });

  it("off, or a higher limit, publishes; the flag wins over the variable", async () => {
    const dir = await makeTempDir();
    for (const [args, env] of [
      [[], { CONNECTOR_MAX_REMOVAL_PERCENT: "off" }],
      [["--max-removal-percent", "off"], { CONNECTOR_MAX_REMOVAL_PERCENT: "10" }],
    ] as const) {
      const out = join(dir, `${args.length}.jsonl`);
      expect((await sync(full, out)).code).toBe(0);
      const run = await sync(shrunk, out, [...args, "--json"], env);
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout).guard).toMatchObject({
        held: false,
        basis: "off",
        users: { previous: 300, removed: 100 },
      });
      expect((await readSnapshot(out)).filter((l) => l.type === "user")).toHaveLength(200);
    }
    const strict = join(dir, "strict.jsonl");
    expect((await sync(full, strict)).code).toBe(0);
    const held = await sync(full, strict, ["--max-removal-percent", "0"], {
      CONNECTOR_MAX_REMOVAL_PERCENT: "off",
    });
    expect(held.code).toBe(0); // nothing removed: even a limit of 0 passes
  });

  it("a limit that is not one exits 2 before any request", async () => {
    const out = join(await makeTempDir(), "bl.jsonl");
    const requests = full.stats.requests;
    const byVariable = await sync(full, out, [], { CONNECTOR_MAX_REMOVAL_PERCENT: "30%" });
    expect(byVariable.code).toBe(2);
    expect(byVariable.stderr).toContain(
      'CONNECTOR_MAX_REMOVAL_PERCENT: "30%" is not a limit; write a percentage from 0 to 100',
    );
    const byFlag = await sync(full, out, ["--max-removal-percent", "200"]);
    expect(byFlag.code).toBe(2);
    expect(byFlag.stderr).toContain('--max-removal-percent: "200" is not a limit');
    expect(full.stats.requests).toBe(requests);
    expect(await exists(out)).toBe(false);
  });

  it("release without anything held, or without a connector, is bad usage", async () => {
    const out = join(await makeTempDir(), "none.jsonl");
    expect((await cli(["release", "blackline", "--out", out], {})).code).toBe(2);
    const bare = await cli(["release"], {});
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain("release: name the connector");
  });
});
