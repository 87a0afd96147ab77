import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { cli } from "../helpers/cli";
import { makeTempDir } from "../helpers/tempDir";
import { batonMessages, type C1zContents, readC1z } from "./c1zReader";
import { fixtureLines, jsonLinesText, writeSnapshot } from "./snapshotFixture";

/**
 * `export --format c1z`, read back by a reader that shares no code with the writer (c1zReader.ts).
 * The expected columns and indexes are baton-sdk's (pkg/dotc1z/*.go at commit e2bd8af9), written
 * out here again from its source.
 */
const BATON_COLUMNS: Record<string, string[]> = {
  v1_resource_types: ["id", "external_id", "data", "sync_id", "discovered_at"],
  v1_resources: [
    "id",
    "resource_type_id",
    "external_id",
    "parent_resource_type_id",
    "parent_resource_id",
    "data",
    "sync_id",
    "discovered_at",
  ],
  v1_entitlements: [
    "id",
    "resource_type_id",
    "resource_id",
    "external_id",
    "data",
    "sync_id",
    "discovered_at",
  ],
  v1_grants: [
    "id",
    "resource_type_id",
    "resource_id",
    "entitlement_id",
    "principal_resource_type_id",
    "principal_resource_id",
    "external_id",
    "expansion",
    "needs_expansion",
    "data",
    "sync_id",
    "discovered_at",
  ],
  v1_sync_runs: [
    "id",
    "sync_id",
    "started_at",
    "ended_at",
    "sync_token",
    "sync_type",
    "parent_sync_id",
    "linked_sync_id",
    "supports_diff",
    "grants_backfilled",
    "stats",
    "ingest_invariant_generation",
    "ingest_invariant_coverage",
    "ingest_invariant_mode",
  ],
  // Empty: baton creates them in every file it opens.
  v1_assets: ["id", "external_id", "content_type", "data", "sync_id", "discovered_at"],
  v1_connector_sessions: ["id", "sync_id", "key", "value"],
};

const BATON_INDEXES: Record<string, [table: string, unique: boolean, columns: string[]]> = {
  idx_resource_types_external_sync_v1: ["v1_resource_types", true, ["external_id", "sync_id"]],
  idx_resources_resource_type_id_v1: ["v1_resources", false, ["resource_type_id"]],
  idx_resources_external_sync_v1: [
    "v1_resources",
    false,
    ["parent_resource_type_id", "parent_resource_id"],
  ],
  idx_resources_parent_resource_id_v1: ["v1_resources", true, ["external_id", "sync_id"]],
  idx_entitlements_resource_id_v1: ["v1_entitlements", false, ["resource_type_id", "resource_id"]],
  idx_entitlements_external_sync_v1: ["v1_entitlements", true, ["external_id", "sync_id"]],
  idx_grants_resource_type_id_resource_id_v1: [
    "v1_grants",
    false,
    ["resource_type_id", "resource_id"],
  ],
  idx_grants_principal_id_v1: [
    "v1_grants",
    false,
    ["principal_resource_type_id", "principal_resource_id"],
  ],
  idx_grants_entitlement_id_principal_id_v1: [
    "v1_grants",
    false,
    ["entitlement_id", "principal_resource_type_id", "principal_resource_id"],
  ],
  idx_grants_external_sync_v1: ["v1_grants", true, ["external_id", "sync_id"]],
  idx_grants_entitlement_sync_grant_v1: ["v1_grants", false, ["entitlement_id", "sync_id", "id"]],
  idx_grants_sync_expansion_v1: ["v1_grants", false, ["sync_id"]],
  idx_grants_sync_needs_expansion_v1: ["v1_grants", false, ["sync_id"]],
  idx_sync_runs_sync_id_v1: ["v1_sync_runs", true, ["sync_id"]],
  idx_assets_external_sync_v1: ["v1_assets", true, ["external_id", "sync_id"]],
  idx_session_store_sync_key_v1: ["v1_connector_sessions", true, ["sync_id", "key"]],
};

// biome-ignore lint/suspicious/noExplicitAny: snapshot lines of every kind, read field by field
type Line = Record<string, any>;

describe("export --format c1z", () => {
  let dir: string;
  let lines: Line[];
  let contents: C1zContents;
  let messages: Awaited<ReturnType<typeof batonMessages>>;

  beforeAll(async () => {
    dir = await makeTempDir("ac-export-c1z-");
    lines = fixtureLines() as Line[];
    // gzip in, so the .gz reader is on the way too.
    await writeSnapshot(join(dir, "snap.jsonl.gz"), lines);
    const run = await cli(
      ["export", join(dir, "snap.jsonl.gz"), "--format", "c1z", join(dir, "out.c1z")],
      {},
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("8 resources, 3 entitlements and 6 grants");
    contents = await readC1z(join(dir, "out.c1z"), dir);
    messages = await batonMessages();
  });

  const ofKind = (kind: string) => lines.filter((line) => line.kind === kind);

  it("starts with baton's magic and holds baton's v1 tables, columns and indexes", () => {
    expect(contents.magic).toEqual(Buffer.from("C1ZF\0", "latin1"));
    expect(Object.keys(contents.tables).sort()).toEqual(Object.keys(BATON_COLUMNS).sort());
    for (const [table, columns] of Object.entries(BATON_COLUMNS))
      expect(contents.tables[table]?.columns.map((c) => c[0])).toEqual(columns);
    const grantColumns = contents.tables.v1_grants?.columns ?? [];
    const column = (name: string) => {
      const [, type, notNull, fallback] = grantColumns.find((c) => c[0] === name) ?? [];
      return [type?.toLowerCase(), notNull, fallback];
    };
    expect(column("needs_expansion")).toEqual(["integer", 1, "0"]);
    expect(column("expansion")).toEqual(["blob", 0, null]);
    expect(column("data")).toEqual(["blob", 1, null]);
    const indexes = Object.fromEntries(
      Object.entries(contents.indexes).map(([name, i]) => [name, [i.table, i.unique, i.columns]]),
    );
    expect(indexes).toEqual(BATON_INDEXES);
    expect(contents.indexes.idx_grants_sync_needs_expansion_v1?.sql).toMatch(
      /where needs_expansion = 1$/,
    );
  });

  it("holds as many rows as the snapshot has records, and one full sync run", () => {
    expect(contents.tables.v1_resource_types?.rows).toHaveLength(ofKind("resource_type").length);
    expect(contents.tables.v1_resources?.rows).toHaveLength(ofKind("resource").length);
    expect(contents.tables.v1_entitlements?.rows).toHaveLength(ofKind("entitlement").length);
    expect(contents.tables.v1_grants?.rows).toHaveLength(ofKind("grant").length);
    expect(contents.tables.v1_assets?.rows).toEqual([]);
    expect(contents.tables.v1_sync_runs?.rows).toEqual([
      {
        id: 1,
        sync_id: "sync-1",
        started_at: "2026-11-21 10:00:00",
        ended_at: "2026-11-21 10:05:30.25",
        sync_token: "",
        sync_type: "full",
        parent_sync_id: "",
        linked_sync_id: "",
        supports_diff: 0,
        grants_backfilled: 1,
        stats: null,
        ingest_invariant_generation: "",
        ingest_invariant_coverage: "",
        ingest_invariant_mode: "",
      },
    ]);
    for (const table of ["v1_resource_types", "v1_resources", "v1_entitlements", "v1_grants"])
      for (const row of contents.tables[table]?.rows ?? []) {
        expect(row.sync_id).toBe("sync-1");
        expect(row.discovered_at).toBe("2026-11-21 10:00:00");
      }
  });

  it("writes each resource type's traits", () => {
    const decoded = (contents.tables.v1_resource_types?.rows ?? []).map((row) => ({
      external_id: row.external_id,
      ...messages.decode("ResourceType", row.data as string),
    }));
    expect(decoded).toEqual([
      { external_id: "user", id: "user", display_name: "User", traits: ["TRAIT_USER"] },
      { external_id: "team", id: "team", display_name: "Team", traits: ["TRAIT_GROUP"] },
      { external_id: "role", id: "role", display_name: "Role", traits: ["TRAIT_ROLE"] },
    ]);
  });

  it("writes each resource's id and type, and a user's trait and status as baton does", () => {
    const rows = contents.tables.v1_resources?.rows ?? [];
    for (const [i, line] of ofKind("resource").entries()) {
      const row = rows[i] as Line;
      const resource = messages.decode("Resource", row.data);
      expect(row.external_id).toBe(`${line.type}:${line.id}`);
      expect(row.resource_type_id).toBe(line.type);
      expect(row.parent_resource_id).toBeNull();
      expect(resource.id).toEqual({ resource_type: line.type, resource: line.id });
      expect(resource.display_name).toBe(line.displayName);
      const [annotation] = resource.annotations;
      const value = Buffer.from(annotation.value ?? "", "base64").toString("hex");
      if (line.type !== "user") {
        const trait = line.type === "team" ? "GroupTrait" : "RoleTrait";
        expect(annotation.type_url).toBe(`type.googleapis.com/c1.connector.v2.${trait}`);
        expect(value).toBe("");
        expect(resource.status).toBeUndefined();
        continue;
      }
      const status = line.status === "enabled" ? "ENABLED" : "DISABLED";
      expect(resource.status).toEqual({ status: `RESOURCE_STATUS_${status}` });
      expect(resource.profile).toEqual({
        fields: {
          // protobufjs names the well-known types' fields in camel case.
          jobTitle: { stringValue: "Controller" },
          level: { numberValue: 3 },
          admin: { boolValue: false },
        },
      });
      expect(annotation.type_url).toBe("type.googleapis.com/c1.connector.v2.UserTrait");
      const trait = messages.decode("UserTrait", value);
      expect(trait.login).toBe(line.user.login);
      expect(trait.status).toEqual({ status: `STATUS_${status}` });
      expect(trait.account_type).toBe("ACCOUNT_TYPE_HUMAN");
      expect(trait.structured_name).toEqual({ given_name: "Given", family_name: "Family" });
      expect(trait.emails ?? []).toEqual(
        line.user.emails.map((address: string, n: number) =>
          n === 0 ? { address, is_primary: true } : { address },
        ),
      );
    }
  });

  it("writes each entitlement with its resource, and each grant's entitlement and principal", () => {
    const entitlementRows = contents.tables.v1_entitlements?.rows ?? [];
    for (const [i, line] of ofKind("entitlement").entries()) {
      const row = entitlementRows[i] as Line;
      const entitlement = messages.decode("Entitlement", row.data);
      expect([row.external_id, row.resource_type_id, row.resource_id]).toEqual([
        line.id,
        line.resource.type,
        line.resource.id,
      ]);
      expect(entitlement).toEqual({
        resource: { id: { resource_type: line.resource.type, resource: line.resource.id } },
        id: line.id,
        display_name: line.displayName,
        grantable_to: [{ id: "user" }],
        purpose: "PURPOSE_VALUE_ASSIGNMENT",
        slug: line.slug,
      });
    }
    const grantRows = contents.tables.v1_grants?.rows ?? [];
    for (const [i, line] of ofKind("grant").entries()) {
      const row = grantRows[i] as Line;
      const grant = messages.decode("Grant", row.data);
      const [type, id] = line.entitlement.split(":");
      expect(row).toMatchObject({
        external_id: line.id,
        entitlement_id: line.entitlement,
        resource_type_id: type,
        resource_id: id,
        principal_resource_type_id: "user",
        principal_resource_id: line.principal.id,
        expansion: null,
        needs_expansion: 0,
      });
      expect(grant).toEqual({
        entitlement: {
          id: line.entitlement,
          resource: { id: { resource_type: type, resource: id } },
        },
        principal: { id: { resource_type: "user", resource: line.principal.id } },
        id: line.id,
      });
    }
  });

  it("takes records in any order: grants before their entitlement, resources before their type", async () => {
    const body = fixtureLines().slice(1, -1).reverse();
    const reordered = [fixtureLines()[0], ...body, fixtureLines().at(-1)] as object[];
    await writeSnapshot(join(dir, "reordered.jsonl"), reordered);
    const out = join(dir, "reordered.c1z");
    const run = await cli(["export", join(dir, "reordered.jsonl"), "--format", "c1z", out], {});
    expect(run.code).toBe(0);
    const back = await readC1z(out, dir);
    expect(back.tables.v1_grants?.rows).toHaveLength(6);
    const team = back.tables.v1_resources?.rows.find((row) => row.external_id === "team:7");
    const decoded = messages.decode("Resource", team?.data as string);
    expect(decoded.annotations[0].type_url).toMatch(/GroupTrait$/);
  });

  it("refuses a file that is not a complete snapshot, naming it, and leaves OUT as it was", async () => {
    const out = join(dir, "kept.c1z");
    await writeFile(out, "the previous export");
    const cases: [string, string | Buffer, RegExp][] = [
      ["no-end.jsonl", jsonLinesText(lines.slice(0, -1)), /has no sync_end/],
      ["garbage.jsonl", "not json\n", /does not start with sync_start|line 1/],
      [
        "no-principal.jsonl",
        jsonLinesText(lines.map((l) => (l.kind === "grant" ? { ...l, principal: undefined } : l))),
        /line \d+ is not a snapshot record \(a grant's principal: Invalid input: expected object/,
      ],
      [
        "miscounted.jsonl",
        jsonLinesText(lines.filter((l) => l.id !== "team:7:member:user:7")),
        /sync_end counts 6 grant records but it holds 5/,
      ],
      [
        "twice.jsonl",
        jsonLinesText([...lines.slice(0, 2), lines[1] as Line, ...lines.slice(2)].map(recount)),
        /is not a complete snapshot: it holds resource_type \S+ twice \(lines 2 and 3\)/,
      ],
      ["missing.jsonl", "", /cannot be read: no such file \(ENOENT\); check the path/],
      [
        "cut.jsonl.gz",
        gzipSync(jsonLinesText(lines)).subarray(0, 200),
        /its gzip data is damaged or cut short/,
      ],
    ];
    for (const [name, text, reason] of cases) {
      const path = join(dir, name);
      if (name !== "missing.jsonl") await writeFile(path, text);
      const run = await cli(["export", path, "--format", "c1z", out], {});
      expect(run.code, name).toBe(2);
      expect(run.stderr, name).toContain(path);
      expect(run.stderr, name).toMatch(reason);
      expect(await readFile(out, "utf8")).toBe("the previous export");
    }
  });

  it("replaces an existing OUT whole; an OUT in a missing directory is a usage error naming it", async () => {
    const out = join(dir, "replaced.c1z");
    await writeFile(out, "old");
    const snap = join(dir, "snap.jsonl.gz");
    expect((await cli(["export", snap, "--format", "c1z", out], {})).code).toBe(0);
    expect((await readFile(out)).subarray(0, 4).toString()).toBe("C1ZF");
    expect((await stat(out)).size).toBeGreaterThan(100);
    const unwritable = join(dir, "no-such-dir", "out.c1z");
    const run = await cli(["export", snap, "--format", "c1z", unwritable], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `OUT: ${unwritable} cannot be written: ${join(dir, "no-such-dir")} does not exist; create the directory first`,
    );
  });
});

/** The fixture with one record twice: its sync_end counts it twice, so only the index objects. */
function recount(line: Line): Line {
  if (line.kind !== "sync_end") return line;
  return { ...line, counts: { ...line.counts, resource_type: line.counts.resource_type + 1 } };
}
