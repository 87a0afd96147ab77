import { SnapshotDigestBuilder } from "../guard/SnapshotDigestBuilder";
import { SPOOL_DIGEST_AT, SPOOL_ID_AT } from "./grantSpool";
import { hashId, WORDS } from "./HashedIdSet";
import type { GrantRecord } from "./records";

/**
 * The hashes the snapshot's writer keeps of records (`HashedIdSet`'s 128-bit hashes), with what
 * repeats cached: a resource type's mask, and the last entitlement's hash (a membership page's
 * grants all name one entitlement, hashed once). The same in any thread: finalize's shard workers
 * hash what the main thread then only looks up.
 */
export class RecordHashes {
  readonly #typeMasks = new Map<string, Uint32Array>();
  #lastEntitlement: string | undefined;
  readonly #lastEntitlementHash = new Uint32Array(WORDS);

  /**
   * A grant's hashes as its spool frame holds them (`SPOOL_HASH_WORDS` words at `at` of `out`): its
   * entitlement's, its principal's, the removal guard's and its id's (grantSpool.ts).
   */
  grant(grant: GrantRecord, out: Uint32Array, at: number): void {
    this.entitlement(grant.entitlement, out, at);
    this.resource(grant.principal, out, at + WORDS);
    digestRule.grantHash(grant, out, at + SPOOL_DIGEST_AT);
    hashId(grant.id, out, at + SPOOL_ID_AT);
  }

  /** The hash of an entitlement id, at `at` of `out`. */
  entitlement(id: string, out: Uint32Array, at: number): void {
    if (id !== this.#lastEntitlement) {
      hashId(id, this.#lastEntitlementHash, 0);
      this.#lastEntitlement = id;
    }
    out.set(this.#lastEntitlementHash, at);
  }

  /**
   * The hash of a resource: its id's, XOR its type's (`typeMask`), so that no key is built from
   * the two strings. For one type this maps distinct ids to distinct hashes; two resources of two
   * types collide only when their ids' hashes differ by exactly the two masks (2^-127 a pair).
   */
  resource(ref: { type: string; id: string }, out: Uint32Array, at: number): void {
    hashId(ref.id, out, at);
    let mask = this.#typeMasks.get(ref.type);
    if (!mask) {
      mask = typeMask(ref.type);
      this.#typeMasks.set(ref.type, mask);
    }
    for (let word = 0; word < WORDS; word++) {
      out[at + word] = (out[at + word] as number) ^ (mask[word] as number);
    }
  }
}

/** Only its `grantHash`, the digest's one rule for a grant's hash, is used. */
const digestRule = new SnapshotDigestBuilder();

/** A resource type's hash with the used-slot bit clear, so XOR with it keeps an id's hash used. */
function typeMask(type: string): Uint32Array {
  const mask = new Uint32Array(WORDS);
  hashId(type, mask, 0);
  mask[0] = (mask[0] as number) & ~1;
  return mask;
}
