import type { AccountsQuery } from "./apiSchemas";
import { searchWords } from "./foldText";
import { BadRequest, NotFound } from "./requestErrors";
import { type AccountRow, accountRow, type Explore, type GrantRow, grantRow } from "./rows";
import { pageOf } from "./sortOrders";

/** One page of the Accounts tab (and of the risk views, which are its filters). */
export function listAccounts(explore: Explore, query: AccountsQuery) {
  const { index, changes } = explore;
  const found = index.searchText.matching(searchWords(query.q));
  let holds: Uint8Array | undefined;
  if (query.entitlement !== undefined) {
    const e = index.entitlementAt.get(query.entitlement);
    if (e === undefined)
      throw new BadRequest(`query entitlement: no entitlement has the id "${query.entitlement}"`);
    holds = new Uint8Array(index.resourceCount);
    for (const holder of index.holders(e)) holds[holder.resource] = 1;
  }
  if (query.change !== "all" && !changes)
    throw new BadRequest(
      "query change: there is nothing to compare; start explore with --diff OLD",
    );
  const keep = (position: number) => {
    const resource = index.accounts[position] as number;
    const disabled = index.isDisabled(resource);
    if (query.status === "disabled" && !disabled) return false;
    if (query.status === "enabled" && disabled) return false;
    if (holds && !holds[resource]) return false;
    if (query.change === "added" && !changes?.resourceAdded[resource]) return false;
    if (query.change === "changed" && !changes?.accountFields.has(resource)) return false;
    switch (query.risk) {
      case "disabled_with_access":
        if (!disabled || !index.holdingCount[resource]) return false;
        break;
      case "privileged":
        if (!index.privilegedCount[resource]) return false;
        break;
      case "no_email":
        if (index.hasEmail(resource)) return false;
        break;
    }
    return !found || found[position] === 1;
  };
  const order = explore.orders.accounts[query.sort];
  const { total, positions } = pageOf(order, query.dir, keep, query.offset, query.limit);
  const rows: AccountRow[] = positions.map((p) => accountRow(explore, index.accounts[p] as number));
  return { total, offset: query.offset, limit: query.limit, rows };
}

/**
 * An account's page: its record, every entitlement it holds and how (directly or through a team),
 * and with `--diff` the grants it lost and the fields that changed. An account only the older
 * snapshot has is shown as removed, with what it held.
 */
export function accountDetail(explore: Explore, type: string, id: string) {
  const { index, changes } = explore;
  const key = `${type}:${id}`;
  const now = index.resourceNamed(key);
  if (now === undefined) {
    const before = changes?.old.resourceNamed(key);
    if (before === undefined || !changes) throw new NotFound(`no account ${key} in this snapshot`);
    const holdings = changes.old
      .holdings(before)
      .map((h) => grantRow(explore, h.grant, before, h.via, true));
    const r = changes.old.resource(before);
    return {
      account: accountRow(explore, before, true),
      user: r.user ?? null,
      profile: r.profile ?? {},
      holdings,
      removedHoldings: [] as GrantRow[],
      fieldChanges: [],
    };
  }
  const r = index.resource(now);
  const holdings = index.holdings(now).map((h) => grantRow(explore, h.grant, now, h.via));
  const removedHoldings = (changes?.removedFrom(key) ?? []).map((g) =>
    grantRow(explore, g, changes?.old.grantPrincipal[g] as number, undefined, true),
  );
  return {
    account: accountRow(explore, now),
    user: r.user ?? null,
    profile: r.profile ?? {},
    holdings,
    removedHoldings,
    fieldChanges: changes?.accountFields.get(now) ?? [],
  };
}
