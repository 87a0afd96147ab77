import type { ResourceLine } from "../snapshot/records";
import type { AccountRow, EntitlementRow, GrantRow, ResourceRef } from "./apiTypes";
import type { ReviewStore } from "./ReviewStore";
import type { SnapshotChanges } from "./SnapshotChanges";
import type { SnapshotIndex } from "./SnapshotIndex";
import type { SortOrders } from "./sortOrders";

/** What every view reads: the snapshot, its sort orders, the changes from `--diff`, the review. */
export interface Explore {
  index: SnapshotIndex;
  orders: SortOrders;
  changes?: SnapshotChanges;
  review: ReviewStore;
}

export type { AccountRow, EntitlementRow, GrantRow, ResourceRef };

const refOf = (index: SnapshotIndex, r: ResourceLine): ResourceRef => ({
  type: r.type,
  typeName: index.resourceTypeName(r.type),
  id: r.id,
  name: r.displayName,
});

export function resourceRef(index: SnapshotIndex, resource: number): ResourceRef {
  return refOf(index, index.resource(resource));
}

/** An account of the shown snapshot (or, `removed`, of the older one). */
export function accountRow(explore: Explore, resource: number, removed = false): AccountRow {
  const index = removed && explore.changes ? explore.changes.old : explore.index;
  const r = index.resource(resource);
  const row: AccountRow = {
    ...refOf(index, r),
    login: r.user?.login ?? "",
    email: r.user?.emails[0] ?? "",
    status: r.status ?? "",
    entitlements: index.holdingCount[resource] ?? 0,
    privileged: index.privilegedCount[resource] ?? 0,
  };
  const changes = explore.changes;
  if (!changes) return row;
  if (removed) return { ...row, change: "removed" };
  if (changes.resourceAdded[resource]) row.change = "added";
  else if (changes.accountFields.has(resource)) row.change = "changed";
  row.grantsAdded = changes.grantsAddedTo[resource] ?? 0;
  row.grantsRemoved = changes.removedFrom(`${r.type}:${r.id}`).length;
  return row;
}

export function entitlementRow(explore: Explore, e: number, removed = false): EntitlementRow {
  const index = removed && explore.changes ? explore.changes.old : explore.index;
  const entitlement = index.entitlements[e];
  if (!entitlement) throw new Error(`no entitlement ${e}`);
  const on = index.resourceNamed(`${entitlement.resource.type}:${entitlement.resource.id}`);
  const row: EntitlementRow = {
    id: entitlement.id,
    name: entitlement.displayName,
    slug: entitlement.slug,
    resource:
      on === undefined
        ? {
            ...entitlement.resource,
            typeName: index.resourceTypeName(entitlement.resource.type),
            name: entitlement.resource.id,
          }
        : resourceRef(index, on),
    privileged: index.privileged[e] === 1,
    holders: index.holderCount[e] ?? 0,
  };
  const changes = explore.changes;
  if (!changes) return row;
  if (removed) return { ...row, change: "removed" };
  if (changes.entitlementAdded[e]) row.change = "added";
  row.holdersAdded = changes.grantsAddedToEntitlement[e] ?? 0;
  row.holdersRemoved = changes.removedOf(entitlement.id).length;
  if (!row.change && (row.holdersAdded || row.holdersRemoved)) row.change = "changed";
  return row;
}

/** A grant of the shown snapshot, held by `holder` (itself, or a member of the team it names). */
export function grantRow(
  explore: Explore,
  grant: number,
  holder: number,
  via: number | undefined,
  removed = false,
): GrantRow {
  const index = removed && explore.changes ? explore.changes.old : explore.index;
  const e = index.grantEntitlement[grant] as number;
  const entitlement = entitlementRow(explore, e, removed);
  const grantId = index.grantId(grant);
  const row: GrantRow = {
    grantId,
    account: resourceRef(index, holder),
    entitlement: {
      id: entitlement.id,
      name: entitlement.name,
      privileged: entitlement.privileged,
      resource: entitlement.resource,
    },
  };
  if (via !== undefined) row.via = resourceRef(index, via);
  if (removed) row.change = "removed";
  else if (explore.changes?.grantAdded[grant]) row.change = "added";
  if (!removed && via === undefined) {
    const decision = explore.review.decisions.get(grantId);
    if (decision) row.review = decision;
  }
  return row;
}
