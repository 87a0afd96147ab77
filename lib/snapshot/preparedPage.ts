import {
  GRANT_START,
  grantLine,
  RESOURCE_START,
  type ResourceKey,
  resourceLine,
} from "./canonicalLine";
import { SPOOL_HASH_WORDS, spoolFrame } from "./grantSpool";
import { hashId, WORDS } from "./HashedIdSet";
import { jsonLinesBytes } from "./jsonLines";
import type { RecordHashes } from "./recordHashes";
import { type GrantRecord, isUser, type SnapshotRecord } from "./records";

/**
 * A page of snapshot lines as `writeLines` takes them: each line's record, and its text where the
 * line is in the writer's exact form (`grantLine`, `resourceLine`: nine in ten of a run's lines),
 * which is then written as it is, neither parsed nor serialised again. Any other line is parsed;
 * one that is no JSON throws.
 */
export function parseLines(lines: readonly string[]): {
  records: (SnapshotRecord | ResourceKey)[];
  texts: (string | undefined)[];
} {
  const records: (SnapshotRecord | ResourceKey)[] = new Array(lines.length);
  const texts: (string | undefined)[] = new Array(lines.length);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const known = line.startsWith(GRANT_START)
      ? grantLine(line)
      : line.startsWith(RESOURCE_START)
        ? resourceLine(line)
        : undefined;
    records[i] = known ?? (JSON.parse(line) as SnapshotRecord);
    texts[i] = known && line;
  }
  return { records, texts };
}

/**
 * The lines of a page's records, UTF-8: `texts[i]` as it is where there (a record read from its
 * line in the writer's form), else the record serialised; all serialised at once when none is
 * there (`jsonLinesBytes`).
 */
export function linesBytes(
  records: readonly (SnapshotRecord | ResourceKey)[],
  texts?: readonly (string | undefined)[],
): Buffer {
  if (!texts || texts.every((text) => text === undefined)) return jsonLinesBytes(records);
  let joined = "";
  for (let i = 0; i < records.length; i++) joined += `${texts[i] ?? JSON.stringify(records[i])}\n`;
  return Buffer.from(joined);
}

/** How a prepared record is told (`PreparedPage.records`). */
export const PreparedKind = {
  resourceType: 0,
  resource: 1,
  /** A resource with the user trait: its type and id are next in `users`. */
  user: 2,
  entitlement: 3,
  /** Any other kind: its name is next in `otherKinds`. */
  other: 4,
} as const;

/** Words a record takes in `PreparedPage.records`: its kind, its line's end, its hash. */
export const PREPARED_WORDS = 2 + WORDS;

/**
 * A page of snapshot lines made ready away from the writer (finalize's shard workers): everything
 * `SnapshotAssembler.writePrepared` needs but what must go in the run's order. Its grants are
 * their spool frame (`spoolFrame`: lines and hashes), all spooled; every other record is its line
 * in `lines` (ending at `records[i * PREPARED_WORDS + 1]`) and the hash its set is looked up by
 * (`HashedIdSet`), so the writer keeps the first of each identity by a look-up and a copy.
 */
export interface PreparedPage {
  grants: number;
  spool: Uint8Array | undefined;
  lines: Uint8Array;
  records: Uint32Array;
  /** Each user's type and id, in order, for the removal guard's digest. */
  users: string[];
  otherKinds: string[];
}

/**
 * Prepares a page of snapshot lines (`parseLines`): the bytes each record is written as, byte for
 * byte what `SnapshotAssembler.writeLines` writes, and the hashes it would compute.
 */
export function preparePage(lines: readonly string[], hashes: RecordHashes): PreparedPage {
  const { records, texts } = parseLines(lines);
  const out: (SnapshotRecord | ResourceKey)[] = [];
  const outTexts: (string | undefined)[] = [];
  const grants: GrantRecord[] = [];
  const grantTexts: (string | undefined)[] = [];
  const others = new Uint32Array(records.length * PREPARED_WORDS);
  const users: string[] = [];
  const otherKinds: string[] = [];
  let grantHashes = new Uint32Array(0);
  for (let i = 0; i < records.length; i++) {
    const record = records[i] as SnapshotRecord | ResourceKey;
    if (record.kind === "grant") {
      grants.push(record);
      grantTexts.push(texts[i]);
      continue;
    }
    const at = out.length * PREPARED_WORDS;
    switch (record.kind) {
      case "resource_type":
        others[at] = PreparedKind.resourceType;
        hashId(record.id, others, at + 2);
        break;
      case "resource":
        others[at] = isUser(record) ? PreparedKind.user : PreparedKind.resource;
        if (isUser(record)) users.push(record.type, record.id);
        hashes.resource(record, others, at + 2);
        break;
      case "entitlement":
        others[at] = PreparedKind.entitlement;
        hashId(record.id, others, at + 2);
        break;
      default:
        others[at] = PreparedKind.other;
        otherKinds.push((record as { kind: string }).kind);
    }
    out.push(record);
    outTexts.push(texts[i]);
  }
  const bytes = out.length > 0 ? linesBytes(out, outTexts) : Buffer.alloc(0);
  for (let r = 0, end = 0; r < out.length; r++) {
    end = bytes.indexOf(10, end) + 1;
    others[r * PREPARED_WORDS + 1] = end;
  }
  if (grants.length > 0) {
    grantHashes = new Uint32Array(grants.length * SPOOL_HASH_WORDS);
    for (let g = 0; g < grants.length; g++) {
      hashes.grant(grants[g] as GrantRecord, grantHashes, g * SPOOL_HASH_WORDS);
    }
  }
  return {
    grants: grants.length,
    spool: grants.length > 0 ? spoolFrame(grants, grantHashes, grantTexts) : undefined,
    lines: bytes,
    records: others.subarray(0, out.length * PREPARED_WORDS),
    users,
    otherKinds,
  };
}
