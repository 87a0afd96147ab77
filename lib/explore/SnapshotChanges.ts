import type { ResourceLine } from "../snapshot/records";
import type { SnapshotIndex } from "./SnapshotIndex";

/** A field of an account that differs between the two snapshots. */
export interface FieldChange {
  field: "displayName" | "status" | "login" | "emails";
  before: string;
  after: string;
}

const NONE: readonly number[] = [];

/**
 * What changed from an older snapshot to the one shown, computed from the two indexes: resources
 * and entitlements added and removed (by type and id, by id), accounts changed (name, status,
 * login, emails: their fingerprints compared, and the records read only where those differ), and
 * grants added and removed (a principal's entitlement ids compared, one principal at a time).
 */
export class SnapshotChanges {
  /** Per resource of the new snapshot: added. */
  readonly resourceAdded: Uint8Array;
  readonly accountFields = new Map<number, FieldChange[]>();
  /** Resource numbers in the old snapshot that the new one lacks. */
  readonly removedResources: number[] = [];
  readonly entitlementAdded: Uint8Array;
  /** Entitlement numbers in the old snapshot that the new one lacks. */
  readonly removedEntitlements: number[] = [];
  /** Per grant of the new snapshot: added. */
  readonly grantAdded: Uint8Array;
  readonly addedGrants: number[] = [];
  /** Grant numbers in the old snapshot that the new one lacks. */
  readonly removedGrants: number[] = [];
  /** Per new resource: grants added to it; per principal key and entitlement id: old grants removed. */
  readonly grantsAddedTo: Int32Array;
  private readonly removedByPrincipal = new Map<string, number[]>();
  private readonly removedByEntitlement = new Map<string, number[]>();
  readonly grantsAddedToEntitlement: Int32Array;

  constructor(
    readonly now: SnapshotIndex,
    readonly old: SnapshotIndex,
  ) {
    const resources = now.resourceCount;
    this.resourceAdded = new Uint8Array(resources);
    /** Per resource of the new snapshot: its number in the old one, or -1. */
    const before = new Int32Array(resources);
    const nowPrints = now.fingerprints();
    const oldPrints = old.fingerprints();
    for (let i = 0; i < resources; i++) {
      // Most resources follow the one before them in both files: tried first, by the keys' bytes.
      const next = i === 0 ? 0 : (before[i - 1] as number) + 1;
      const b =
        next > 0 && next < old.resourceCount && now.sameKey(i, old, next)
          ? next
          : (old.resourceNamed(now.keyOf(i)) ?? -1);
      before[i] = b;
      if (b < 0) this.resourceAdded[i] = 1;
      else if (
        nowPrints[2 * i] !== oldPrints[2 * b] ||
        nowPrints[2 * i + 1] !== oldPrints[2 * b + 1]
      ) {
        const fields = accountFieldChanges(old.resource(b), now.resource(i));
        if (fields.length) this.accountFields.set(i, fields);
      }
    }
    /** Per resource of the old snapshot: its number in the new one, or -1. */
    const after = new Int32Array(old.resourceCount).fill(-1);
    before.forEach((b, i) => {
      if (b >= 0) after[b] = i;
    });
    after.forEach((a, i) => {
      if (a < 0) this.removedResources.push(i);
    });
    this.entitlementAdded = new Uint8Array(now.entitlements.length);
    /** Entitlement numbers across the two snapshots (by id), -1 where the other lacks it. */
    const oldOf = Int32Array.from(now.entitlements, (e) => old.entitlementAt.get(e.id) ?? -1);
    const newOf = Int32Array.from(old.entitlements, (e) => now.entitlementAt.get(e.id) ?? -1);
    oldOf.forEach((o, e) => {
      if (o < 0) this.entitlementAdded[e] = 1;
    });
    newOf.forEach((n, e) => {
      if (n < 0) this.removedEntitlements.push(e);
    });

    // A grant is kept when the same principal holds the same entitlement (by id) in the other
    // snapshot: the other side's entitlements of the principal are stamped, then each grant checked.
    this.grantAdded = new Uint8Array(now.grantCount);
    this.grantsAddedTo = new Int32Array(resources);
    this.grantsAddedToEntitlement = new Int32Array(now.entitlements.length);
    const heldBefore = new Int32Array(now.entitlements.length).fill(-1);
    const oldGrants = old.byPrincipal;
    const nowGrants = now.byPrincipal;
    for (let i = 0; i < resources; i++) {
      const b = before[i] as number;
      if (b >= 0)
        for (let at = oldGrants.start[b] as number; at < (oldGrants.start[b + 1] as number); at++) {
          const e = newOf[old.grantEntitlement[oldGrants.items[at] as number] as number] as number;
          if (e >= 0) heldBefore[e] = i;
        }
      for (let at = nowGrants.start[i] as number; at < (nowGrants.start[i + 1] as number); at++) {
        const grant = nowGrants.items[at] as number;
        const e = now.grantEntitlement[grant] as number;
        if (heldBefore[e] === i) continue;
        this.grantAdded[grant] = 1;
        this.addedGrants.push(grant);
        this.grantsAddedTo[i] = (this.grantsAddedTo[i] as number) + 1;
        this.grantsAddedToEntitlement[e] = (this.grantsAddedToEntitlement[e] as number) + 1;
      }
    }
    const heldAfter = new Int32Array(old.entitlements.length).fill(-1);
    for (let i = 0; i < old.resourceCount; i++) {
      const a = after[i] as number;
      if (a >= 0)
        for (let at = nowGrants.start[a] as number; at < (nowGrants.start[a + 1] as number); at++) {
          const e = oldOf[now.grantEntitlement[nowGrants.items[at] as number] as number] as number;
          if (e >= 0) heldAfter[e] = i;
        }
      for (let at = oldGrants.start[i] as number; at < (oldGrants.start[i + 1] as number); at++) {
        const grant = oldGrants.items[at] as number;
        const e = old.grantEntitlement[grant] as number;
        if (heldAfter[e] === i) continue;
        const key = old.keyOf(i);
        const entitlementId = old.entitlements[e]?.id as string;
        this.removedGrants.push(grant);
        push(this.removedByPrincipal, key, grant);
        push(this.removedByEntitlement, entitlementId, grant);
      }
    }
  }

  /** Old grants the principal (`type:id`) no longer has. */
  removedFrom(key: string): readonly number[] {
    return this.removedByPrincipal.get(key) ?? NONE;
  }

  /** Old grants of the entitlement that the new snapshot lacks. */
  removedOf(entitlementId: string): readonly number[] {
    return this.removedByEntitlement.get(entitlementId) ?? NONE;
  }

  get counts() {
    const accounts = (list: Iterable<number>, index: SnapshotIndex) =>
      [...list].filter((i) => index.isAccount(i)).length;
    const added = [...this.resourceAdded.keys()].filter((i) => this.resourceAdded[i]);
    return {
      accountsAdded: accounts(added, this.now),
      accountsRemoved: accounts(this.removedResources, this.old),
      accountsChanged: this.accountFields.size,
      entitlementsAdded: this.entitlementAdded.reduce((n, x) => n + x, 0),
      entitlementsRemoved: this.removedEntitlements.length,
      grantsAdded: this.addedGrants.length,
      grantsRemoved: this.removedGrants.length,
    };
  }
}

function push(map: Map<string, number[]>, key: string, value: number) {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function accountFieldChanges(before: ResourceLine, after: ResourceLine): FieldChange[] {
  const out: FieldChange[] = [];
  const compare = (field: FieldChange["field"], a = "", b = "") => {
    if (a !== b) out.push({ field, before: a, after: b });
  };
  compare("displayName", before.displayName, after.displayName);
  compare("status", before.status, after.status);
  compare("login", before.user?.login, after.user?.login);
  compare("emails", before.user?.emails.join(", "), after.user?.emails.join(", "));
  return out;
}
