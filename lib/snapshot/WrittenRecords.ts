import { SnapshotDigestBuilder } from "../guard/SnapshotDigestBuilder";
import type { ResourceKey } from "./canonicalLine";
import { SPOOL_HASH_WORDS, spoolFrame } from "./grantSpool";
import { HashedIdSet, WORDS } from "./HashedIdSet";
import { linesBytes, PREPARED_WORDS, PreparedKind, type PreparedPage } from "./preparedPage";
import { RecordHashes } from "./recordHashes";
import type { GrantRecord, RecordKind, SnapshotRecord } from "./records";

/** A page's bytes: its new records' snapshot lines and its grants' spool frame, when it has any. */
export interface PageBytes {
  out: Buffer | undefined;
  spool: Buffer | undefined;
}

/**
 * What a snapshot has written so far, and the bytes of each page as it comes: the sets of written
 * resources, entitlements and resource types (128-bit hashes, `HashedIdSet`: about 25 bytes an
 * id), the counts of each kind, and the removal guard's digest (`SnapshotDigestBuilder`). A record
 * whose identity an earlier one had is left out of a page's bytes; grants are only spooled here
 * (`spooled`), judged and counted by the assembler once the spool is complete.
 */
export class WrittenRecords {
  readonly resources = new HashedIdSet();
  readonly entitlements = new HashedIdSet();
  readonly #resourceTypes = new HashedIdSet(8);
  readonly counts: Record<RecordKind, number> = {
    resource_type: 0,
    resource: 0,
    entitlement: 0,
    grant: 0,
  };
  readonly digest = new SnapshotDigestBuilder();
  /** Grants spooled, repeats included. */
  spooled = 0;
  readonly #hashes = new RecordHashes();
  /** The spool hashes of the page in hand, `SPOOL_HASH_WORDS` a grant; grown as pages need. */
  #pageHashes = new Uint32Array(1024 * SPOOL_HASH_WORDS);

  /**
   * A page's new records as bytes: its resources, entitlements and resource types as snapshot
   * lines (one `linesBytes`), its grants as one spool frame. Records already written are left out,
   * and the counts and the digest take the rest, as the page is handed in. `texts[i]`, when there,
   * is record `i`'s line as `writeLines` took it, written as it is (the record is then a
   * `ResourceKey` or a grant).
   */
  serialise(
    records: readonly (SnapshotRecord | ResourceKey)[],
    texts?: readonly (string | undefined)[],
  ): PageBytes {
    const out: (SnapshotRecord | ResourceKey)[] = [];
    const outTexts: (string | undefined)[] = [];
    const grants: GrantRecord[] = [];
    const grantTexts: (string | undefined)[] = [];
    for (let i = 0; i < records.length; i++) {
      const record = records[i] as SnapshotRecord | ResourceKey;
      switch (record.kind) {
        case "resource_type":
          if (!this.#resourceTypes.add(record.id)) continue;
          break;
        case "resource":
          this.#hashes.resource(record, scratch, 0);
          if (!this.resources.addHash(scratch, 0)) continue;
          break;
        case "entitlement":
          if (!this.entitlements.add(record.id)) continue;
          break;
        case "grant": {
          const at = grants.length * SPOOL_HASH_WORDS;
          if (at === this.#pageHashes.length) this.#growPageHashes();
          this.#hashes.grant(record, this.#pageHashes, at);
          grants.push(record);
          grantTexts.push(texts?.[i]);
          continue;
        }
      }
      this.counts[record.kind]++;
      this.digest.add(record);
      out.push(record);
      outTexts.push(texts?.[i]);
    }
    this.spooled += grants.length;
    return {
      spool: grants.length > 0 ? spoolFrame(grants, this.#pageHashes, grantTexts) : undefined,
      out: out.length > 0 ? linesBytes(out, outTexts) : undefined,
    };
  }

  /**
   * The bytes of a page `preparePage` made ready (in a worker thread), as `serialise` makes them
   * from its lines, byte for byte: its records are only looked up by the hashes it carries (the
   * first of each identity kept), counted and added to the digest; its spool frame is taken as
   * it is.
   */
  prepared(page: PreparedPage): PageBytes {
    const { records, users, otherKinds } = page;
    const lines = Buffer.from(page.lines.buffer, page.lines.byteOffset, page.lines.byteLength);
    const kept: Buffer[] = [];
    let start = 0;
    let user = 0;
    let other = 0;
    for (let at = 0; at < records.length; at += PREPARED_WORDS) {
      const end = records[at + 1] as number;
      const kind = records[at] as number;
      let name: RecordKind | undefined;
      let added = true;
      if (kind === PreparedKind.resourceType) {
        name = "resource_type";
        added = this.#resourceTypes.addHash(records, at + 2);
      } else if (kind === PreparedKind.resource || kind === PreparedKind.user) {
        name = "resource";
        added = this.resources.addHash(records, at + 2);
      } else if (kind === PreparedKind.entitlement) {
        name = "entitlement";
        added = this.entitlements.addHash(records, at + 2);
      }
      if (kind === PreparedKind.user) {
        const [type, id] = [users[user] as string, users[user + 1] as string];
        user += 2;
        if (added) this.digest.add({ kind: "resource", type, id, user: true });
      }
      // Another kind is written and counted as `serialise` does; no set holds it.
      if (kind === PreparedKind.other) name = otherKinds[other++] as RecordKind;
      if (added) {
        this.counts[name as RecordKind]++;
        kept.push(lines.subarray(start, end));
      }
      start = end;
    }
    const out = kept.length === records.length / PREPARED_WORDS ? lines : Buffer.concat(kept);
    this.spooled += page.grants;
    const spool = page.spool;
    return {
      spool: spool ? Buffer.from(spool.buffer, spool.byteOffset, spool.byteLength) : undefined,
      out: out.length > 0 ? out : undefined,
    };
  }

  /** Gives the written ids' sets back to the system: every grant is judged, or the sync stopped. */
  releaseSets(): void {
    this.resources.release();
    this.entitlements.release();
  }

  #growPageHashes(): void {
    const grown = new Uint32Array(this.#pageHashes.length * 2);
    grown.set(this.#pageHashes);
    this.#pageHashes = grown;
  }
}

const scratch = new Uint32Array(WORDS);
