import { html } from "htm/preact";
import { type AccountRow, type EntitlementRow, type GrantRow, number } from "./api";
import { ReviewControl } from "./review";
import { ChangeBadge, Delta, href, type Route, SortHeader } from "./ui";

const accountHref = (a: { type: string; id: string }) => href(["account", a.type, a.id]);
const entitlementHref = (e: { id: string }) => href(["entitlement", e.id]);

export function StatusBadge({ status }: { status: string }) {
  if (!status) return null;
  return html`<span class=${`badge status-${status}`}>${status}</span>`;
}

export function Privileged({ on }: { on: boolean }) {
  return on
    ? html`<span class="badge privileged" title="privileged by the connector's definition">privileged</span>`
    : null;
}

/** Accounts: name (a link to its page), login, status, entitlements held, privileged ones, id. */
export function AccountsTable(props: { route: Route; rows: AccountRow[]; diff: boolean }) {
  const sortable = (column: string, label: string, numeric = false) =>
    html`<${SortHeader} route=${props.route} column=${column} label=${label} fallback="name" numeric=${numeric} />`;
  return html`<table class="grid">
    <thead><tr>
      ${sortable("name", "Name")}${sortable("login", "Login")}<th>Email</th>${sortable("status", "Status")}
      ${sortable("entitlements", "Entitlements", true)}<th class="num">Privileged</th>
      ${props.diff ? html`<th>Change</th>` : null}${sortable("id", "ID")}
    </tr></thead>
    <tbody>
      ${props.rows.map(
        (a) => html`<tr class=${a.change ? `row-${a.change}` : ""}>
          <td><a href=${accountHref(a)}>${a.name}</a></td>
          <td>${a.login}</td>
          <td>${a.email || html`<span class="muted">none</span>`}</td>
          <td><${StatusBadge} status=${a.status} /></td>
          <td class="num">${number(a.entitlements)}</td>
          <td class="num">${a.privileged ? html`<span class="badge privileged">${a.privileged}</span>` : ""}</td>
          ${props.diff ? html`<td><${ChangeBadge} change=${a.change} /> <${Delta} added=${a.grantsAdded} removed=${a.grantsRemoved} /></td>` : null}
          <td class="id">${a.id}</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

export function EntitlementsTable(props: {
  route: Route;
  rows: EntitlementRow[];
  diff: boolean;
  sortable?: boolean;
}) {
  const header = (column: string, label: string, numeric = false) =>
    props.sortable === false
      ? html`<th class=${numeric ? "num" : ""}>${label}</th>`
      : html`<${SortHeader} route=${props.route} column=${column} label=${label} fallback="name" numeric=${numeric} />`;
  return html`<table class="grid">
    <thead><tr>
      ${header("name", "Entitlement")}${header("resource", "Resource")}${header("holders", "Holders", true)}
      ${props.diff ? html`<th>Change</th>` : null}${header("id", "ID")}
    </tr></thead>
    <tbody>
      ${props.rows.map(
        (
          e,
        ) => html`<tr class=${e.change === "added" || e.change === "removed" ? `row-${e.change}` : ""}>
          <td><a href=${entitlementHref(e)}>${e.name}</a> <${Privileged} on=${e.privileged} /></td>
          <td><span class="type">${e.resource.typeName}</span> ${e.resource.name}</td>
          <td class="num">${number(e.holders)}</td>
          ${props.diff ? html`<td><${ChangeBadge} change=${e.change} /> <${Delta} added=${e.holdersAdded} removed=${e.holdersRemoved} /></td>` : null}
          <td class="id">${e.id}</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

/**
 * Grants, from an account's side (`show: "entitlement"`) or an entitlement's (`show: "account"`):
 * how each is held, its change, and the review's keep / revoke / flag with a note. A grant held
 * through a team is reviewed on the membership that passes it on.
 */
export function GrantsTable(props: {
  rows: GrantRow[];
  show: "entitlement" | "account" | "both";
  review: boolean;
}) {
  const account = props.show !== "entitlement";
  const entitlement = props.show !== "account";
  return html`<table class="grid grants">
    <thead><tr>
      ${account ? html`<th>Holder</th>` : null}
      ${entitlement ? html`<th>Entitlement</th><th>Resource</th>` : null}
      <th>How</th><th>Change</th>
      ${props.review ? html`<th>Review</th>` : null}
    </tr></thead>
    <tbody>
      ${props.rows.map(
        (g) => html`<tr class=${g.change ? `row-${g.change}` : ""} data-grant=${g.grantId}>
          ${account ? html`<td><a href=${accountHref(g.account)}>${g.account.name}</a> <span class="type">${g.account.typeName}</span></td>` : null}
          ${
            entitlement
              ? html`<td><a href=${entitlementHref(g.entitlement)}>${g.entitlement.name}</a> <${Privileged} on=${g.entitlement.privileged} /></td>
                <td><span class="type">${g.entitlement.resource.typeName}</span> ${g.entitlement.resource.name}</td>`
              : null
          }
          <td>${g.via ? html`through <a href=${accountHref(g.via)}>${g.via.name}</a>` : "direct"}</td>
          <td><${ChangeBadge} change=${g.change} /></td>
          ${
            props.review
              ? html`<td>${
                  g.change === "removed"
                    ? html`<span class="muted">gone</span>`
                    : g.via
                      ? html`<span class="muted">review the team membership</span>`
                      : html`<${ReviewControl} key=${g.grantId} row=${g} />`
                }</td>`
              : null
          }
        </tr>`,
      )}
    </tbody>
  </table>`;
}
