import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { csvCell, csvRow } from "../../lib/export/csv/csvCells";
import { GrantRows } from "../../lib/export/csv/GrantRows";
import { readSnapshotFile } from "../../lib/snapshot/readSnapshotFile";
import { writeTenantSnapshot } from "../diff/tenantSnapshot";
import { cli } from "../helpers/cli";
import { makeTempDir } from "../helpers/tempDir";
import { fixtureLines, jsonLinesText, writeSnapshot } from "./snapshotFixture";

/** Python's csv module (RFC 4180 dialect) reads the sheet back: a parser that is not ours. */
const PYTHON_CSV = `
import csv, json, sys
with open(sys.argv[1], newline="", encoding="utf-8") as f:
    print(json.dumps(list(csv.reader(f, strict=True))))
`;

describe("export --format csv", () => {
  let dir: string;
  let rows: string[][];
  let text: string;

  beforeAll(async () => {
    dir = await makeTempDir("ac-export-csv-");
    await writeSnapshot(join(dir, "snap.jsonl"), fixtureLines());
    const out = join(dir, "grants.csv");
    const run = await cli(["export", join(dir, "snap.jsonl"), "--format", "csv", out], {});
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`exported 6 grants to ${out} (csv: a header and one row per grant)\n`);
    text = await readFile(out, "utf8");
    const python = execFileSync("python3", ["-c", "import sys; print(sys.executable)"], {
      encoding: "utf8",
    }).trim();
    rows = JSON.parse(execFileSync(python, ["-c", PYTHON_CSV, out], { encoding: "utf8" }));
  });

  it("has a header and one row per grant, with who holds what", () => {
    expect(rows[0]).toEqual([
      "account",
      "login",
      "email",
      "status",
      "entitlement",
      "resource",
      "account_id",
      "entitlement_id",
    ]);
    const grants = fixtureLines().filter((line) => (line as { kind: string }).kind === "grant");
    expect(rows).toHaveLength(grants.length + 1);
    expect(rows[1]).toEqual([
      "Ada Lovelace",
      "ada@example.com",
      "ada@example.com",
      "enabled",
      "EMEA Close member",
      "EMEA Close",
      "1042",
      "team:7:member",
    ]);
    expect(text.endsWith("\r\n")).toBe(true);
    expect(text.split("\r\n")).toHaveLength(grants.length + 2);
  });

  it("quotes commas, quotes and line breaks, and keeps UTF-8", () => {
    const bob = rows.find((row) => row[6] === "8");
    expect(bob).toEqual([
      'Smith, "Bob"\nJr.',
      "'+bob",
      "bob@example.com",
      "disabled",
      "APAC, Close member",
      "APAC, Close",
      "8",
      "team:8:member",
    ]);
    expect(rows.find((row) => row[6] === "10")?.[0]).toBe("Zoë Ünïcode");
  });

  it("guards cells a spreadsheet would run as formulas", () => {
    expect(rows.find((row) => row[6] === "7")?.[0]).toBe(`'=HYPERLINK("http://x","click")`);
    const ops = rows.find((row) => row[6] === "9");
    expect(ops?.slice(0, 3)).toEqual(["'-Ops bot", "'@ops", ""]);
    for (const row of rows) for (const cell of row) expect(cell, cell).not.toMatch(/^[=+\-@\t\r]/);
    expect(csvCell("\t=1+1")).toBe("'\t=1+1");
    expect(csvCell("\r=1")).toBe(`"'\r=1"`);
    expect(csvRow(["a", "b c", ""])).toBe("a,b c,\r\n");
  });

  it("refuses an incomplete snapshot, naming it, and leaves OUT as it was", async () => {
    const out = join(dir, "kept.csv");
    await writeFile(out, "previous");
    const path = join(dir, "cut.jsonl");
    await writeFile(path, jsonLinesText(fixtureLines().slice(0, -1)));
    const run = await cli(["export", path, "--format", "csv", out], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${path} is not a complete snapshot: it has no sync_end`);
    expect(await readFile(out, "utf8")).toBe("previous");
  });

  it("refuses an unknown format and writing over the snapshot (exit 2)", async () => {
    const snap = join(dir, "snap.jsonl");
    const before = await readFile(snap, "utf8");
    expect((await cli(["export", snap, "--format", "xlsx", join(dir, "x")], {})).code).toBe(2);
    const run = await cli(["export", snap, "--format", "csv", snap], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("is the snapshot itself");
    expect(await readFile(snap, "utf8")).toBe(before);
  });

  it("joins on disk to the same rows in the snapshot's order however many partitions it takes", async () => {
    const tenant = join(dir, "tenant.jsonl");
    const { grants } = await writeTenantSnapshot(tenant, {
      users: 300,
      teams: 12,
      teamsPerUser: 3,
    });
    const rowsIn = async (partitions: number) => {
      const join = await GrantRows.open(tenant, "unused.csv", partitions);
      try {
        await readSnapshotFile(tenant, (record) => join.add(record));
        let text = "";
        for await (const rows of join.rows()) text += rows;
        return text;
      } finally {
        await join.close();
      }
    };
    const one = await rowsIn(1);
    expect(one.split("\r\n")).toHaveLength(grants + 1);
    // Rows follow the grants' order in the file: their account ids as the file lists them.
    const lines = (await readFile(tenant, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const principals = lines.filter((l) => l.kind === "grant").map((l) => l.principal.id);
    expect(
      one
        .trim()
        .split("\r\n")
        .map((row) => row.split(",").at(-2)),
    ).toEqual(principals);
    expect(await rowsIn(7)).toBe(one);
  });

  it("refuses a grant whose principal the snapshot lacks, naming the grant", async () => {
    const lines = fixtureLines() as { kind: string; principal?: { id: string }; id?: string }[];
    const grant = lines.find((line) => line.kind === "grant");
    if (!grant?.principal) throw new Error("the fixture has no grant");
    grant.principal.id = "nobody";
    const path = join(dir, "dangling.jsonl");
    await writeSnapshot(path, lines);
    const out = join(dir, "dangling.csv");
    const run = await cli(["export", path, "--format", "csv", out], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `grant ${grant.id} names a principal or an entitlement the snapshot does not hold`,
    );
  });
});
