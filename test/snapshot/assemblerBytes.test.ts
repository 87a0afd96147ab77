/**
 * The snapshot's bytes for a fixed sequence of pages: any change to what a record becomes, the
 * order records are written in, or which grants are kept changes the hash. Pages of 300 users with
 * grants before the objects they name, dangling grants among kept ones, pages served twice, and
 * names that JSON escapes or UTF-8 spells in several bytes.
 */
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { grant, SnapshotAssembler, type SnapshotRecord } from "../../lib/snapshot";
import { SnapshotFile } from "../../lib/snapshot/SnapshotFile";
import { makeTempDir } from "../helpers/tempDir";

/** Ids and names with what JSON must escape and what UTF-8 takes several bytes for. */
const NAMES = [
  "Zoë",
  "東京",
  "😀 emoji",
  'quote " and \\ backslash',
  "line\u2028sep",
  "ctl\u0001",
  "plain",
];

function pages(): SnapshotRecord[][] {
  const pages: SnapshotRecord[][] = [];
  for (let p = 0; p < 40; p++) {
    const page: SnapshotRecord[] = [];
    for (let n = 0; n < 300; n++) {
      const k = p * 300 + n;
      const name = NAMES[k % NAMES.length] as string;
      const id = `${name}-${k}`;
      // Grants first, some naming users or teams never written (dangling), some written later.
      page.push(
        grant(`team:t${k % 37}:member`, {
          type: "user",
          id: `${NAMES[(k + 3) % NAMES.length]}-${k + 150}`,
        }),
      );
      if (k % 11 === 0) page.push(grant(`team:missing${k}:member`, { type: "user", id }));
      if (k % 13 === 0)
        page.push(grant(`team:t${k % 37}:member`, { type: "user", id: `gone-${k}` }));
      page.push({
        kind: "resource",
        type: "user",
        id,
        displayName: `${name} ${k}`,
        status: k % 5 === 0 ? "disabled" : "enabled",
        user: {
          login: `${id}@example.com`,
          emails: k % 2 ? [`${k}@example.com`] : [],
          ...(k % 3 ? { givenName: name } : {}),
        },
        ...(k % 4 ? { profile: { jobTitle: name, timeZoneId: k % 24, active: k % 2 === 0 } } : {}),
      });
    }
    if (p < 37) {
      page.push({
        kind: "resource",
        type: "team",
        id: `t${p}`,
        displayName: NAMES[p % NAMES.length] as string,
      });
      page.push({
        kind: "entitlement",
        id: `team:t${p}:member`,
        resource: { type: "team", id: `t${p}` },
        slug: "member",
        displayName: `${NAMES[p % NAMES.length]} member`,
        purpose: "assignment",
        grantableTo: ["user"],
      });
    }
    pages.push(page);
    // A page served twice: written once.
    if (p % 9 === 0) pages.push(page);
  }
  return pages;
}

/** The text the assembler writes for `pages()`, and its result. */
async function assemble(
  out: Writable,
  outReleasesChunks: boolean,
  text: () => Promise<string>,
  passGrants?: number,
): Promise<{ text: string; result: unknown }> {
  const spoolDir = await makeTempDir();
  const assembler = await SnapshotAssembler.open({
    out,
    outReleasesChunks,
    spoolDir,
    passGrants,
    syncId: "golden",
    connector: "test",
    startedAt: new Date("2024-01-02T03:04:05.000Z"),
  });
  for (const page of pages()) await assembler.write(page);
  const result = await assembler.complete();
  // The spool, and the file of grant ids repeats are looked for in, are removed.
  expect(await readdir(spoolDir)).toEqual([]);
  return { text: await text(), result };
}

/** Through a PassThrough, which hands each chunk on as it is: the assembler's buffers are its own. */
function throughPassThrough() {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on("data", (chunk: Buffer) => chunks.push(chunk));
  return assemble(out, false, async () => Buffer.concat(chunks).toString("utf8"));
}

/** Into a snapshot file (gzip when `gz`), which reuses the chunks lines and grants are copied in. */
async function throughFile(gz: boolean, passGrants?: number) {
  const path = join(await makeTempDir(), gz ? "golden.jsonl.gz" : "golden.jsonl");
  const file = await SnapshotFile.open(path, "golden", "elsewhere");
  return assemble(
    file.stream,
    true,
    async () => {
      await file.commit();
      const bytes = await readFile(path);
      return (gz ? gunzipSync(bytes) : bytes).toString("utf8");
    },
    passGrants,
  );
}

/**
 * Into a sink that takes every chunk without pushing back (a buffer larger than the snapshot) and
 * reads each a while after it was written, then says it is done with it: a chunk filled again
 * before its write's callback would show here, where a file stream's drain hides it.
 */
function throughLateSink() {
  const parts: Buffer[] = [];
  const out = new Writable({
    highWaterMark: 64 * 1024 * 1024,
    write(chunk: Buffer, _encoding, done) {
      setTimeout(() => {
        parts.push(Buffer.from(chunk));
        done();
      }, 1);
    },
  });
  return assemble(out, true, async () => Buffer.concat(parts).toString("utf8"));
}

describe("SnapshotAssembler's bytes", () => {
  it.each([
    ["a PassThrough", throughPassThrough],
    ["a snapshot file", () => throughFile(false)],
    ["a gzip snapshot file", () => throughFile(true)],
    ["a sink that is done with each chunk late", throughLateSink],
    // About 15,000 grants spooled: 15 passes over their ids, each judging a slice of the hashes.
    [
      "a snapshot file, repeated grants looked for 1,000 at a time",
      () => throughFile(false, 1_000),
    ],
  ])(
    "are what they were for the same records in the same order (content, escapes, order, dangling grants), through %s",
    async (_, write) => {
      const { text, result } = await write();
      const withoutEnd = text.slice(0, text.lastIndexOf("\n", text.length - 2) + 1);
      expect(result).toEqual({
        counts: { resource_type: 0, resource: 12_037, entitlement: 37, grant: 11_850 },
        skipped: { dangling_grant: 2_165 },
      });
      expect(Buffer.byteLength(withoutEnd)).toBe(4_614_669);
      // The bytes of the assembler as of 8ea7a16, before the spool held bytes and hashes.
      expect(createHash("sha256").update(withoutEnd).digest("hex")).toBe(
        "7235f26d6750caf92ebad4c4459c3eda4a5e17a07ff0e94caf19f1bd3010d5af",
      );
    },
  );
});
