import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openExplore } from "../../lib/explore";
import { listAccounts } from "../../lib/explore/accountViews";
import { accountsQuery, entitlementsQuery } from "../../lib/explore/apiSchemas";
import { listEntitlements } from "../../lib/explore/entitlementViews";
import { fold, searchWords } from "../../lib/explore/foldText";
import { makeTempDir } from "../helpers/tempDir";

// The review page's search on snapshots whose names change length when case and accents are
// folded (İ, ß, ẞ, ligatures, combining marks, emoji): each search's result is checked whole.

interface Person {
  id: string;
  name: string;
  login: string;
  emails?: string[];
}

/** A complete BlackLine-shaped snapshot of these people, each a member of one team. */
async function writeSnapshot(path: string, people: readonly Person[], teams: readonly string[]) {
  const lines: unknown[] = [
    {
      kind: "sync_start",
      syncId: "sync-search",
      connector: "blackline",
      startedAt: "2026-11-21T10:00:00Z",
      version: 1,
    },
    { kind: "resource_type", id: "user", displayName: "User", traits: ["user"] },
    { kind: "resource_type", id: "team", displayName: "Team", traits: ["group"] },
  ];
  teams.forEach((name, t) => {
    lines.push({ kind: "resource", type: "team", id: `t${t}`, displayName: name });
    lines.push({
      kind: "entitlement",
      id: `team:t${t}:member`,
      resource: { type: "team", id: `t${t}` },
      slug: "member",
      displayName: `${name} member`,
      purpose: "assignment",
      grantableTo: ["user"],
    });
  });
  people.forEach((p, i) => {
    const emails = p.emails ?? [];
    lines.push({
      kind: "resource",
      type: "user",
      id: p.id,
      displayName: p.name,
      status: "enabled",
      user: { login: p.login, emails },
    });
    const entitlement = `team:t${i % teams.length}:member`;
    lines.push({
      kind: "grant",
      id: `${entitlement}:user:${p.id}`,
      entitlement,
      principal: { type: "user", id: p.id },
    });
  });
  lines.push({
    kind: "sync_end",
    syncId: "sync-search",
    status: "complete",
    finishedAt: "2026-11-21T10:05:00Z",
    counts: {
      resource_type: 2,
      resource: teams.length + people.length,
      entitlement: teams.length,
      grant: people.length,
    },
    skipped: { dangling_grant: 0 },
  });
  await writeFile(path, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
}

type Explore = Awaited<ReturnType<typeof openExplore>>["explore"];

/** Every account a search finds (all pages), by id, and the total the page reports. */
function found(explore: Explore, q: string): { total: number; ids: string[] } {
  const ids: string[] = [];
  let total = 0;
  for (let offset = 0; offset === 0 || offset < total; offset += 500) {
    const page = listAccounts(explore, accountsQuery.parse({ q, offset, limit: 500, sort: "id" }));
    total = page.total;
    ids.push(...page.rows.map((r) => r.id));
  }
  return { total, ids: ids.sort() };
}

// Logins and emails are opaque (p01...), so a name is found by its name alone.
const PEOPLE: Person[] = [
  { id: "p01", name: "İlkay Gündoğan", login: "p01" },
  { id: "p02", name: "Zoë Saldaña", login: "p02" },
  { id: "p03", name: "Jürgen Straße", login: "p03" },
  { id: "p04", name: "ﬁona ﬂoyd", login: "p04" },
  { id: "p05", name: "Zoe Smith", login: "p05" },
  { id: "p06", name: "ZOË BRÜCKNER", login: "p06" },
  { id: "p07", name: "Zoe\u0308 Nakamura", login: "p07" },
  { id: "p08", name: "Δημήτρης Παπαδόπουλος", login: "p08" },
  { id: "p09", name: "👩🏽‍💻 Ada Dev", login: "p09" },
  { id: "p10", name: "İbrahim İsmail İnce", login: "p10" },
  { id: "p11", name: "GROẞMANN", login: "p11" },
  { id: "p12", name: "Łukasz Ødegaard", login: "p12" },
  { id: "p13", name: "ǅemal Oﬃce", login: "p13" },
  { id: "p14", name: "ΟΔΥΣΣΕΥΣ", login: "p14" },
  // Forty names that lower-case longer (İ is one unit, its lower case two) before the last one:
  // offsets taken before folding pointed hits here at the wrong accounts.
  ...Array.from({ length: 40 }, (_, i) => ({
    id: `q${String(i).padStart(2, "0")}`,
    name: "İİİİİİİİ İİİİ",
    login: `q${i}`,
  })),
  { id: "z99", name: "Zed Last", login: "z99", emails: ["zed@example.test"] },
];

describe("explore: the search folds case and accents the same way for the text and the words", () => {
  it("folds every kind of name to what a reviewer types", () => {
    expect(fold("İlkay")).toBe("ilkay");
    expect(fold("Zoë")).toBe("zoe");
    expect(fold("Zoe\u0308")).toBe("zoe");
    expect(fold("Straße")).toBe("strasse");
    expect(fold("GROẞ")).toBe("gross");
    expect(fold("ﬁﬂ ﬃ")).toBe("fifl ffi");
    expect(fold("ǅemal")).toBe("dzemal");
    expect(fold("ΟΔΥΣΣΕΥΣ")).toBe("οδυσσευσ");
    expect(fold("Łukasz Ødegaard")).toBe("lukasz odegaard");
    expect(fold("a\u0000b\u0001c")).toBe("a b c");
    expect(fold("👩🏽‍💻")).toBe("👩🏽‍💻");
    expect(searchWords("  ZOË\u0000zoe  İLKAY ")).toEqual(["zoe", "ilkay"]);
  });

  it("finds exactly the accounts whose name, login, id or email holds every word", async () => {
    const dir = await makeTempDir("ac-explore-search-");
    const path = join(dir, "names.jsonl");
    await writeSnapshot(path, PEOPLE, ["Zürich Controllers", "Straßburg Close"]);
    const { explore } = await openExplore(path);
    const cases: [string, string[]][] = [
      ["zoe", ["p02", "p05", "p06", "p07"]],
      ["ZOË", ["p02", "p05", "p06", "p07"]],
      ["zoë nakamura", ["p07"]],
      ["ilkay", ["p01"]],
      ["İLKAY gundogan", ["p01"]],
      ["ibrahim ince", ["p10"]],
      ["strasse", ["p03"]],
      ["Straße", ["p03"]],
      ["gross", ["p11"]],
      ["fiona floyd", ["p04"]],
      ["ﬁ", ["p04", "p13"]],
      ["office", ["p13"]],
      ["dzemal", ["p13"]],
      ["δημητρης", ["p08"]],
      ["οδυσσευς", ["p14"]],
      ["👩🏽‍💻", ["p09"]],
      ["ada", ["p09"]],
      ["lukasz odegaard", ["p12"]],
      ["zed", ["z99"]],
      ["example.test", ["z99"]],
      ["last zed", ["z99"]],
      ["zed nobody", []],
      ["q07", ["q07"]],
      ["", PEOPLE.map((p) => p.id)],
    ];
    for (const [q, ids] of cases)
      expect({ q, ...found(explore, q) }).toEqual({ q, total: ids.length, ids: [...ids].sort() });
    const entitlements = (q: string) =>
      listEntitlements(explore, entitlementsQuery.parse({ q })).rows.map((r) => r.id);
    expect(entitlements("zurich")).toEqual(["team:t0:member"]);
    expect(entitlements("strasburg")).toEqual([]);
    expect(entitlements("strassburg close")).toEqual(["team:t1:member"]);
  });

  it("counts exactly the accounts that hold a word among 2,000 with Turkish names", async () => {
    const dir = await makeTempDir("ac-explore-search-");
    const path = join(dir, "turkish.jsonl");
    const names = ["İlkay Şahin", "İbrahim Yılmaz", "İsmail Öztürk", "Ada Lovelace", "Zoë Ünal"];
    const people: Person[] = Array.from({ length: 2000 }, (_, i) => {
      const domain = i % 3 === 0 ? "other.test" : "example.com";
      const login = `user${i}@${domain}`;
      return {
        id: `u${i}`,
        name: names[i % names.length] as string,
        login,
        emails: i % 7 === 0 ? [login, `u${i}@example.org`] : [login],
      };
    });
    await writeSnapshot(path, people, ["Team"]);
    const { explore } = await openExplore(path);
    // Worked out here from the ASCII logins and emails, without the fold.
    const holding = (word: string) =>
      people
        .filter((p) => [p.login, p.id, ...(p.emails ?? [])].some((t) => t.includes(word)))
        .map((p) => p.id)
        .sort();
    for (const word of ["example", "example.org", "other", "user1999"]) {
      const ids = holding(word);
      expect(ids.length).toBeGreaterThan(0);
      expect(found(explore, word)).toEqual({ total: ids.length, ids });
    }
    const byName = (prefix: string) =>
      people
        .filter((p) => p.name.startsWith(prefix))
        .map((p) => p.id)
        .sort();
    expect(found(explore, "ilkay sahin")).toEqual({ total: 400, ids: byName("İlkay") });
    expect(found(explore, "yilmaz")).toEqual({ total: 400, ids: byName("İbrahim") });
    expect(found(explore, "zoe unal")).toEqual({ total: 400, ids: byName("Zoë") });
  });
});
