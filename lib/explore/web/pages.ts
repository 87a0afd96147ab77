import { html } from "htm/preact";
import {
  type AccountRow,
  type EntitlementRow,
  encode,
  type GrantRow,
  number,
  type Summary,
} from "./api";
import { GrantsTable, Privileged, StatusBadge } from "./tables";
import { ChangeBadge, href, Loading, Pager, type Route, useFetch } from "./ui";

interface AccountDetail {
  account: AccountRow;
  user: { login: string; emails: string[]; givenName?: string; familyName?: string } | null;
  profile: Record<string, string | number | boolean>;
  holdings: GrantRow[];
  removedHoldings: GrantRow[];
  fieldChanges: Array<{ field: string; before: string; after: string }>;
}

/** An account: who it is, every entitlement it holds and how, what it lost, and the review. */
export function AccountPage({ route }: { route: Route; summary: Summary }) {
  const [, type = "", id = ""] = route.path;
  const detail = useFetch<AccountDetail>(`/api/accounts/${encode(type)}/${encode(id)}`);
  if (!detail.data) return html`<${Loading} error=${detail.error} />`;
  const { account, user, profile, holdings, removedHoldings, fieldChanges } = detail.data;
  const direct = holdings.filter((h) => !h.via).length;
  return html`<article class="detail">
    <header class="detail-head">
      <h2>${account.name} <${StatusBadge} status=${account.status} /> <${ChangeBadge} change=${account.change} /></h2>
      <dl class="facts">
        <div><dt>Login</dt><dd>${user?.login ?? "—"}</dd></div>
        <div><dt>Email</dt><dd>${user?.emails.join(", ") || html`<span class="warn">none</span>`}</dd></div>
        <div><dt>${account.typeName} id</dt><dd class="id">${account.id}</dd></div>
        ${Object.entries(profile).map(([k, v]) => html`<div><dt>${k}</dt><dd>${String(v)}</dd></div>`)}
      </dl>
      ${fieldChanges.length ? html`<p class="fields">Changed since the older sync: ${fieldChanges.map((f) => html`<span class="field">${f.field} <del>${f.before || "—"}</del> → <ins>${f.after || "—"}</ins></span>`)}</p>` : null}
    </header>
    <h3>Entitlements <span class="count">${number(holdings.length)}</span> <span class="aside">${number(direct)} direct, ${number(holdings.length - direct)} through a team</span></h3>
    ${holdings.length ? html`<${GrantsTable} rows=${holdings} show="entitlement" review=${account.change !== "removed"} />` : html`<p class="muted">Holds nothing.</p>`}
    ${removedHoldings.length ? html`<h3>Removed since the older sync <span class="count">${number(removedHoldings.length)}</span></h3><${GrantsTable} rows=${removedHoldings} show="entitlement" review=${false} />` : null}
  </article>`;
}

interface EntitlementDetail {
  entitlement: EntitlementRow;
  total: number;
  offset: number;
  limit: number;
  holders: GrantRow[];
  removedHolders: GrantRow[];
  removedTotal?: number;
}

/** An entitlement: what it is on, every holder (a page at a time) and how, who lost it. */
export function EntitlementPage({ route }: { route: Route; summary: Summary }) {
  const id = route.path[1] ?? "";
  const offset = route.query.get("offset") ?? undefined;
  const detail = useFetch<EntitlementDetail>(`/api/entitlements/${encode(id)}`, {
    offset,
    limit: 100,
  });
  if (!detail.data) return html`<${Loading} error=${detail.error} />`;
  const { entitlement: e, holders, removedHolders, removedTotal } = detail.data;
  return html`<article class="detail">
    <header class="detail-head">
      <h2>${e.name} <${Privileged} on=${e.privileged} /> <${ChangeBadge} change=${e.change} /></h2>
      <dl class="facts">
        <div><dt>On</dt><dd><span class="type">${e.resource.typeName}</span> ${e.resource.name}</dd></div>
        <div><dt>Entitlement id</dt><dd class="id">${e.id}</dd></div>
        <div><dt>Holders</dt><dd>${number(e.holders)}</dd></div>
      </dl>
    </header>
    <h3>Holders <span class="count">${number(detail.data.total)}</span>
      ${e.change === "removed" ? null : html`<a class="aside" href=${href(["accounts"], { entitlement: e.id })}>search, filter and sort them in Accounts</a>`}</h3>
    ${holders.length ? html`<${GrantsTable} rows=${holders} show="account" review=${e.change !== "removed"} /><${Pager} route=${route} ...${detail.data} />` : html`<p class="muted">No one holds it.</p>`}
    ${removedHolders.length ? html`<h3>Removed since the older sync <span class="count">${number(removedTotal ?? removedHolders.length)}</span></h3><${GrantsTable} rows=${removedHolders} show="account" review=${false} />` : null}
  </article>`;
}
