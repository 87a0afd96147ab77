import type { AccountsQuery } from "./apiSchemas";
import { searchWords } from "./foldText";
import { BadRequest, NotFound } from "./requestErrors";
import { type AccountRow, accountRow, type Explore, type GrantRow, grantRow } from "./rows";
import { pageOf } from "./sortOrders";

/**
 * One page of the Accounts tab (and of the risk views, which are its filters): the accounts kept
 * are marked in one array by position (the search's hits, then each filter a pass over those
 * still marked), then the sorted column's order is walked once for the page and the count.
 */
export function listAccounts(explore: Explore, query: AccountsQuery) {
  const { index, changes } = explore;
  const n = index.accounts.length;
  const kept = index.searchText.matching(searchWords(query.q)) ?? new Uint8Array(n).fill(1);
  const narrow = (test: (resource: number) => boolean) => {
    for (let p = 0; p < n; p++) if (kept[p] && !test(index.accounts[p] as number)) kept[p] = 0;
  };
  if (query.entitlement !== undefined) {
    const e = index.entitlementAt.get(query.entitlement);
    if (e === undefined)
      throw new BadRequest(`query entitlement: no entitlement has the id "${query.entitlement}"`);
    const holds = new Uint8Array(index.resourceCount);
    for (const holder of index.holders(e)) holds[holder.resource] = 1;
    narrow((r) => holds[r] === 1);
  }
  if (query.change !== "all" && !changes)
    throw new BadRequest(
      "query change: there is nothing to compare; start explore with --diff OLD",
    );
  if (query.status !== "all") {
    const disabled = query.status === "disabled";
    narrow((r) => index.isDisabled(r) === disabled);
  }
  if (query.change === "added") narrow((r) => changes?.resourceAdded[r] === 1);
  if (query.change === "changed") narrow((r) => changes?.accountFields.has(r) === true);
  if (query.risk === "disabled_with_access")
    narrow((r) => index.isDisabled(r) && (index.holdingCount[r] as number) > 0);
  if (query.risk === "privileged") narrow((r) => (index.privilegedCount[r] as number) > 0);
  if (query.risk === "no_email") narrow((r) => !index.hasEmail(r));
  const order = explore.orders.accounts[query.sort];
  const page = pageOf(order, query.dir, (p) => kept[p] === 1, query.offset, query.limit);
  const rows: AccountRow[] = page.positions.map((p) =>
    accountRow(explore, index.accounts[p] as number),
  );
  return { total: page.total, offset: query.offset, limit: query.limit, rows };
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
