import { html } from "htm/preact";
import { useState } from "preact/hooks";
import {
  type AccountRow,
  download,
  type EntitlementRow,
  type GrantRow,
  number,
  type Page,
  type Summary,
} from "./api";
import { AccountsTable, EntitlementsTable, GrantsTable } from "./tables";
import {
  href,
  Loading,
  listParams,
  Pager,
  type Route,
  SearchBox,
  Select,
  Toolbar,
  useFetch,
} from "./ui";

const CHANGE_FILTER: Array<[string, string]> = [
  ["all", "any"],
  ["added", "added"],
  ["changed", "changed"],
];

export function AccountsTab({ route, summary }: { route: Route; summary: Summary }) {
  const entitlements = useFetch<Page<EntitlementRow>>("/api/entitlements", { limit: 500 });
  const list = useFetch<Page<AccountRow>>("/api/accounts", listParams(route));
  return html`<section>
    <${Counts} summary=${summary} />
    <${Toolbar}>
      <${SearchBox} route=${route} placeholder="Search names, logins, emails and ids  ( / )" />
      <${Select} route=${route} name="status" label="Status" options=${[["all", "any"], ["enabled", "enabled"], ["disabled", "disabled"]]} />
      <${Select} route=${route} name="entitlement" label="Holds"
        options=${holdsOptions(route.query.get("entitlement"), entitlements.data?.rows ?? [])} />
      ${summary.diff ? html`<${Select} route=${route} name="change" label="Change" options=${CHANGE_FILTER} />` : null}
    <//>
    ${list.data ? html`<${AccountsTable} route=${route} rows=${list.data.rows} diff=${!!summary.diff} /><${Pager} route=${route} ...${list.data} />` : html`<${Loading} error=${list.error} />`}
  </section>`;
}

/** The Holds filter's choices: the first 500 entitlements by name, and the one chosen if beyond. */
function holdsOptions(chosen: string | null, rows: EntitlementRow[]): Array<[string, string]> {
  const options: Array<[string, string]> = [
    ["", "any entitlement"],
    ...rows.map((e): [string, string] => [e.id, e.name]),
  ];
  if (chosen && !rows.some((e) => e.id === chosen)) options.push([chosen, chosen]);
  return options;
}

function Counts({ summary }: { summary: Summary }) {
  return html`<dl class="counts">
    <div><dt>Accounts</dt><dd>${number(summary.accounts)}</dd></div>
    <div><dt>Disabled</dt><dd>${number(summary.disabled)}</dd></div>
    ${summary.resourceTypes
      .filter((t) => !t.traits.includes("user"))
      .map((t) => html`<div><dt>${t.name}s</dt><dd>${number(t.resources)}</dd></div>`)}
    <div><dt>Entitlements</dt><dd>${number(summary.entitlements)}</dd></div>
    <div><dt>Grants</dt><dd>${number(summary.grants)}</dd></div>
  </dl>`;
}

export function EntitlementsTab({ route, summary }: { route: Route; summary: Summary }) {
  const list = useFetch<Page<EntitlementRow>>("/api/entitlements", listParams(route));
  const types: Array<[string, string]> = [
    ["", "any"],
    ...summary.resourceTypes
      .filter((t) => t.entitlements > 0)
      .map((t): [string, string] => [t.id, `${t.name} (${number(t.entitlements)})`]),
  ];
  return html`<section>
    <${Toolbar}>
      <${SearchBox} route=${route} placeholder="Search entitlements and resources  ( / )" />
      <${Select} route=${route} name="resourceType" label="Resource type" options=${types} />
      <${Select} route=${route} name="privileged" label="Privileged" options=${[["all", "any"], ["yes", "privileged"], ["no", "not privileged"]]} />
      ${summary.diff ? html`<${Select} route=${route} name="change" label="Change" options=${CHANGE_FILTER} />` : null}
    <//>
    ${list.data ? html`<${EntitlementsTable} route=${route} rows=${list.data.rows} diff=${!!summary.diff} /><${Pager} route=${route} ...${list.data} />` : html`<${Loading} error=${list.error} />`}
  </section>`;
}

const RISKS = [
  [
    "disabled_with_access",
    "Disabled, still holding access",
    "Accounts that are disabled upstream and still hold entitlements: revoke what they hold, or check why they are disabled.",
  ],
  [
    "privileged",
    "Privileged access",
    "Accounts holding an entitlement the connector marks privileged (BlackLine roles, the Valimail owner member type).",
  ],
  [
    "no_email",
    "No email",
    "Accounts without an email address: often service or shared accounts, with no one to ask.",
  ],
] as const;

export function RisksTab({ route, summary }: { route: Route; summary: Summary }) {
  const risk = route.path[1] ?? "disabled_with_access";
  const about = RISKS.find(([id]) => id === risk) ?? RISKS[0];
  const list = useFetch<Page<AccountRow>>("/api/accounts", listParams(route, { risk }));
  return html`<section>
    <nav class="subtabs" aria-label="Risk views">
      ${RISKS.map(([id, label]) => html`<a href=${href(["risks", id])} aria-current=${id === risk ? "page" : undefined}>${label} <span class="count">${number(summary.risks[id])}</span></a>`)}
    </nav>
    <p class="about">${about[2]}</p>
    <${Toolbar}><${SearchBox} route=${route} placeholder="Search these accounts  ( / )" /><//>
    ${list.data ? html`<${AccountsTable} route=${route} rows=${list.data.rows} diff=${!!summary.diff} /><${Pager} route=${route} ...${list.data} />` : html`<${Loading} error=${list.error} />`}
  </section>`;
}

const CHANGES = [
  ["accounts", "added", "Accounts added", "accountsAdded"],
  ["accounts", "removed", "Accounts removed", "accountsRemoved"],
  ["accounts", "changed", "Accounts changed", "accountsChanged"],
  ["entitlements", "added", "Entitlements added", "entitlementsAdded"],
  ["entitlements", "removed", "Entitlements removed", "entitlementsRemoved"],
  ["grants", "added", "Grants added", "grantsAdded"],
  ["grants", "removed", "Grants removed", "grantsRemoved"],
] as const;

export function ChangesTab({ route, summary }: { route: Route; summary: Summary }) {
  const diff = summary.diff;
  const kind = route.path[1] ?? "grants";
  const change = route.path[2] ?? "added";
  const list = useFetch<
    Page<AccountRow & { fields?: Array<{ field: string; before: string; after: string }> }>
  >("/api/changes", { kind, change, offset: route.query.get("offset") ?? undefined, limit: 50 });
  if (!diff)
    return html`<p class="about">Start explore with <code>--diff OLD</code> to see what changed since an older sync.</p>`;
  return html`<section>
    <p class="about">Compared with sync <code>${diff.syncId}</code> of ${diff.startedAt.slice(0, 10)}.</p>
    <nav class="subtabs" aria-label="Changes">
      ${CHANGES.map(([k, c, label, count]) => html`<a href=${href(["changes", k, c])} aria-current=${k === kind && c === change ? "page" : undefined}>${label} <span class="count">${number(diff.counts[count])}</span></a>`)}
    </nav>
    ${
      !list.data
        ? html`<${Loading} error=${list.error} />`
        : html`${
            kind === "accounts"
              ? html`<${AccountsTable} route=${route} rows=${list.data.rows} diff=${true} />
                ${change === "changed" ? html`<ul class="fields">${list.data.rows.map((r) => html`<li><b>${r.name}</b>: ${(r.fields ?? []).map((f) => html`<span class="field">${f.field} <del>${f.before || "—"}</del> → <ins>${f.after || "—"}</ins></span>`)}</li>`)}</ul>` : null}`
              : kind === "entitlements"
                ? html`<${EntitlementsTable} route=${route} rows=${list.data.rows as unknown as EntitlementRow[]} diff=${true} sortable=${false} />`
                : html`<${GrantsTable} rows=${list.data.rows as unknown as GrantRow[]} show="both" review=${false} />`
          }<${Pager} route=${route} ...${list.data} />`
    }
  </section>`;
}

export function ReviewTab({ summary }: { summary: Summary }) {
  const exported = useFetch<{ decisions: GrantRow[] }>("/api/review/export", { format: "json" });
  const { keep, revoke, flag, grants } = summary.review;
  // An export is fetched with the token (a plain link would not send it) and saved from a Blob.
  const [failed, setFailed] = useState<string | null>(null);
  const save = (format: string) =>
    download("/api/review/export", { format }).then(
      () => setFailed(null),
      (error: Error) => setFailed(error.message),
    );
  return html`<section>
    <dl class="counts">
      <div><dt>Keep</dt><dd>${number(keep)}</dd></div>
      <div><dt>Revoke</dt><dd>${number(revoke)}</dd></div>
      <div><dt>Flag</dt><dd>${number(flag)}</dd></div>
      <div><dt>Not reviewed</dt><dd>${number(grants - keep - revoke - flag)}</dd></div>
    </dl>
    <p class="about">Decide on an account's or an entitlement's page. Decisions are saved beside the snapshot (<code>${summary.snapshot}.review.json</code>) as you make them.</p>
    <div class="toolbar">
      <button type="button" onClick=${() => save("csv")}>Export CSV</button>
      <button type="button" onClick=${() => save("json")}>Export JSON</button>
      ${failed ? html`<span class="error" role="alert">${failed}</span>` : null}
    </div>
    ${exported.data ? html`<${GrantsTable} rows=${exported.data.decisions} show="both" review=${true} />` : html`<${Loading} error=${exported.error} />`}
  </section>`;
}
