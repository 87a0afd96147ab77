import { html } from "htm/preact";
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { accessToken, TOKEN_REFUSED, TOKEN_TAKEN, takeTokenFromAddress } from "./accessToken";
import { number, type Summary, when } from "./api";
import { AccountPage, EntitlementPage } from "./pages";
import { AccountsTab, ChangesTab, EntitlementsTab, ReviewTab, RisksTab } from "./tabs";
import { href, Loading, type Route, useFetch, useRoute } from "./ui";

const TABS = [
  ["accounts", "Accounts", AccountsTab],
  ["entitlements", "Entitlements", EntitlementsTab],
  ["risks", "Risks", RisksTab],
  ["changes", "Changes", ChangesTab],
  ["review", "Review", ReviewTab],
] as const;

/** Which tab a view belongs to: an account's page is under Accounts, an entitlement's under Entitlements. */
const tabOf = (route: Route) =>
  ({ account: "accounts", entitlement: "entitlements" })[route.path[0] ?? ""] ??
  route.path[0] ??
  "accounts";

function tabCount(tab: string, summary: Summary): number | undefined {
  if (tab === "accounts") return summary.accounts;
  if (tab === "entitlements") return summary.entitlements;
  if (tab === "changes" && summary.diff)
    return Object.values(summary.diff.counts).reduce((n, x) => n + x, 0);
  if (tab === "review") return summary.review.keep + summary.review.revoke + summary.review.flag;
  return undefined;
}

/** Without the token (the bare address typed, or a token of an earlier run), only how to get it. */
function NoToken() {
  return html`<main role="alert">
    <h2>This review page needs its key</h2>
    <p class="about">To see it, open the URL with the token that <code>access-connectors explore</code> printed (it ends in <code>#token=…</code>).</p>
    <p class="about">A new run of the command makes a new token; the one of an earlier run is refused.</p>
  </main>`;
}

function App() {
  const [refused, setRefused] = useState(() => accessToken() === null);
  useEffect(() => {
    const refuse = () => setRefused(true);
    const take = () => setRefused(false);
    addEventListener(TOKEN_REFUSED, refuse);
    addEventListener(TOKEN_TAKEN, take);
    return () => {
      removeEventListener(TOKEN_REFUSED, refuse);
      removeEventListener(TOKEN_TAKEN, take);
    };
  }, []);
  return refused ? html`<${NoToken} />` : html`<${Review} />`;
}

function Review() {
  const route = useRoute();
  // The summary is fetched again for each view, so the review's counts follow the decisions made.
  const summary = useFetch<Summary>("/api/summary", {}, route.path.join("/"));
  const data = summary.data;
  if (!data) return html`<main><${Loading} error=${summary.error} /></main>`;
  const tab = tabOf(route);
  const View =
    route.path[0] === "account"
      ? AccountPage
      : route.path[0] === "entitlement"
        ? EntitlementPage
        : (TABS.find(([id]) => id === tab)?.[2] ?? AccountsTab);
  return html`
    <header class="top">
      <div class="brand"><span class="logo" aria-hidden="true">◆</span> ${data.connectorDisplay} <span class="muted">snapshot</span></div>
      <div class="sync">
        <span title=${data.syncId}>${data.snapshot}</span>
        <span class="muted">synced ${when(data.startedAt)}</span>
        ${data.diff ? html`<span class="badge compare">compared with ${when(data.diff.startedAt)}</span>` : null}
      </div>
    </header>
    <nav class="tabs" aria-label="Views">
      ${TABS.filter(([id]) => id !== "changes" || data.diff).map(([id, label]) => {
        const count = tabCount(id, data);
        return html`<a href=${href([id])} aria-current=${tab === id ? "page" : undefined}>${label}${count === undefined ? null : html` <span class="count">${number(count)}</span>`}</a>`;
      })}
    </nav>
    <main><${View} route=${route} summary=${data} /></main>
    <footer class="muted">Served on this machine only; nothing leaves it. Press <kbd>/</kbd> to search.</footer>`;
}

// `/` focuses the view's search box (unless typing in a field already); Escape leaves a field.
addEventListener("keydown", (event) => {
  const target = event.target as HTMLElement;
  const typing = target.matches("input, select, textarea");
  if (event.key === "/" && !typing) {
    const search = document.querySelector<HTMLInputElement>("[data-search]");
    if (search) {
      event.preventDefault();
      search.focus();
      search.select();
    }
  } else if (event.key === "Escape" && typing) target.blur();
});

takeTokenFromAddress();
// A URL pasted into a tab already open on this page changes only the fragment (no reload). This
// listener comes before the views' own, so they see the address without the token.
addEventListener("hashchange", () => {
  if (takeTokenFromAddress()) dispatchEvent(new Event(TOKEN_TAKEN));
});
render(html`<${App} />`, document.getElementById("app") as HTMLElement);
