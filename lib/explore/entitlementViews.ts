import type { EntitlementsQuery, PageQuery } from "./apiSchemas";
import { searchWords } from "./foldText";
import { BadRequest, NotFound } from "./requestErrors";
import { type Explore, entitlementRow, grantRow } from "./rows";
import { pageOf } from "./sortOrders";

/** One page of the Entitlements tab. */
export function listEntitlements(explore: Explore, query: EntitlementsQuery) {
  const { index, changes } = explore;
  const found = index.entitlementText.matching(searchWords(query.q));
  if (query.change !== "all" && !changes)
    throw new BadRequest(
      "query change: there is nothing to compare; start explore with --diff OLD",
    );
  if (
    query.resourceType !== undefined &&
    !index.resourceTypes.some((t) => t.id === query.resourceType)
  )
    throw new BadRequest(
      `query resourceType: no resource type "${query.resourceType}"; use one of ${index.resourceTypes.map((t) => t.id).join(", ")}`,
    );
  const keep = (e: number) => {
    const entitlement = index.entitlements[e];
    if (!entitlement) return false;
    if (query.resourceType !== undefined && entitlement.resource.type !== query.resourceType)
      return false;
    if (query.privileged === "yes" && !index.privileged[e]) return false;
    if (query.privileged === "no" && index.privileged[e]) return false;
    if (query.change === "added" && !changes?.entitlementAdded[e]) return false;
    if (
      query.change === "changed" &&
      !changes?.grantsAddedToEntitlement[e] &&
      !changes?.removedOf(entitlement.id).length
    )
      return false;
    return !found || found[e] === 1;
  };
  const order = explore.orders.entitlements[query.sort];
  const { total, positions } = pageOf(order, query.dir, keep, query.offset, query.limit);
  return {
    total,
    offset: query.offset,
    limit: query.limit,
    rows: positions.map((e) => entitlementRow(explore, e)),
  };
}

/**
 * An entitlement's page: its record and one page of its holders (accounts and teams, and the
 * members of those teams), with `--diff` the holders it lost; an entitlement only the older
 * snapshot has is shown as removed.
 */
export function entitlementDetail(explore: Explore, id: string, page: PageQuery) {
  const { index, changes } = explore;
  const e = index.entitlementAt.get(id);
  if (e === undefined) {
    const before = changes?.old.entitlementAt.get(id);
    if (before === undefined || !changes)
      throw new NotFound(`no entitlement ${id} in this snapshot`);
    const holders = changes.old.holders(before);
    return {
      entitlement: entitlementRow(explore, before, true),
      total: holders.length,
      offset: page.offset,
      limit: page.limit,
      holders: holders
        .slice(page.offset, page.offset + page.limit)
        .map((h) => grantRow(explore, h.grant, h.resource, h.via, true)),
      removedHolders: [],
    };
  }
  const holders = index.holders(e);
  const removed = changes?.removedOf(id) ?? [];
  return {
    entitlement: entitlementRow(explore, e),
    total: holders.length,
    offset: page.offset,
    limit: page.limit,
    holders: holders
      .slice(page.offset, page.offset + page.limit)
      .map((h) => grantRow(explore, h.grant, h.resource, h.via)),
    removedHolders: removed
      .slice(0, 500)
      .map((g) => grantRow(explore, g, changes?.old.grantPrincipal[g] as number, undefined, true)),
    removedTotal: removed.length,
  };
}
