import { html } from "htm/preact";
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { getJson, number, type Params, queryString } from "./api";

/** The address's hash is the page's state: `#/accounts?q=ada&sort=login`; a reload keeps it. */
export interface Route {
  path: string[];
  query: URLSearchParams;
}

export function currentRoute(): Route {
  const hash = location.hash.replace(/^#\/?/, "");
  const at = hash.indexOf("?");
  const path = (at === -1 ? hash : hash.slice(0, at))
    .split("/")
    .filter(Boolean)
    .map(decodeURIComponent);
  return { path, query: new URLSearchParams(at === -1 ? "" : hash.slice(at + 1)) };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const changed = () => setRoute(currentRoute());
    addEventListener("hashchange", changed);
    return () => removeEventListener("hashchange", changed);
  }, []);
  return route;
}

export const href = (path: string[], params: Params = {}) =>
  `#/${path.map(encodeURIComponent).join("/")}${queryString(params)}`;

/** Changes the query of the current view; a filter typed replaces the entry, not adds one. */
export function setQuery(route: Route, changes: Params) {
  const params: Params = Object.fromEntries(route.query);
  Object.assign(params, changes);
  if (!("offset" in changes)) params.offset = undefined;
  history.replaceState(null, "", href(route.path, params));
  dispatchEvent(new HashChangeEvent("hashchange"));
}

/** Fetches `path` whenever it or its parameters change; the latest answer wins. */
export function useFetch<T>(path: string, params: Params = {}, version: string | number = 0) {
  const key = `${path}${queryString(params)}#${version}`;
  const [state, setState] = useState<{ key: string; data?: T; error?: string }>({ key: "" });
  useEffect(() => {
    let live = true;
    getJson<T>(path, params).then(
      (data) => live && setState({ key, data }),
      (error: Error) => live && setState({ key, error: error.message }),
    );
    return () => {
      live = false;
    };
  }, [key]);
  return state.key === key ? state : { ...state, loading: true };
}

export function Loading({ error }: { error?: string | undefined }) {
  return error
    ? html`<p class="error" role="alert">${error}</p>`
    : html`<p class="muted loading">Loading…</p>`;
}

export function ChangeBadge({ change }: { change?: string | undefined }) {
  if (!change) return null;
  const label = { added: "added", removed: "removed", changed: "changed" }[change] ?? change;
  return html`<span class=${`badge change-${change}`}>${label}</span>`;
}

export function Delta({
  added,
  removed,
}: {
  added?: number | undefined;
  removed?: number | undefined;
}) {
  if (!added && !removed) return null;
  return html`<span class="delta">${added ? html`<span class="plus">+${number(added)}</span>` : null}${
    removed ? html`<span class="minus">−${number(removed)}</span>` : null
  }</span>`;
}

/** A column header that sorts: a button, so the keyboard reaches it; aria-sort says the order. */
export function SortHeader(props: {
  route: Route;
  column: string;
  label: string;
  fallback: string;
  numeric?: boolean;
}) {
  const sort = props.route.query.get("sort") ?? props.fallback;
  const dir = props.route.query.get("dir") ?? "asc";
  const active = sort === props.column;
  const next = active && dir === "asc" ? "desc" : "asc";
  return html`<th class=${props.numeric ? "num" : ""} aria-sort=${active ? (dir === "asc" ? "ascending" : "descending") : "none"}>
    <button type="button" class="sort" onClick=${() => setQuery(props.route, { sort: props.column, dir: next })}>
      ${props.label}<span class="arrow" aria-hidden="true">${active ? (dir === "asc" ? "▲" : "▼") : ""}</span>
    </button>
  </th>`;
}

export function Pager(props: { route: Route; total: number; offset: number; limit: number }) {
  const { total, offset, limit } = props;
  const last = Math.min(total, offset + limit);
  return html`<div class="pager">
    <span class="muted">${total ? `${number(offset + 1)}–${number(last)} of ${number(total)}` : "nothing matches"}</span>
    <button type="button" disabled=${offset === 0} onClick=${() => setQuery(props.route, { offset: Math.max(0, offset - limit) })}>← Previous</button>
    <button type="button" disabled=${last >= total} onClick=${() => setQuery(props.route, { offset: offset + limit })}>Next →</button>
  </div>`;
}

/** The search box of a tab; `/` anywhere focuses it. */
export function SearchBox(props: { route: Route; placeholder: string }) {
  const value = props.route.query.get("q") ?? "";
  return html`<input type="search" class="search" data-search placeholder=${props.placeholder} aria-label="Search"
    value=${value} onInput=${(event: Event) => setQuery(props.route, { q: (event.target as HTMLInputElement).value })} />`;
}

export function Select(props: {
  route: Route;
  name: string;
  label: string;
  options: Array<[string, string]>;
}) {
  const value = props.route.query.get(props.name) ?? props.options[0]?.[0] ?? "";
  return html`<label class="filter">${props.label}
    <select value=${value} onChange=${(event: Event) => setQuery(props.route, { [props.name]: (event.target as HTMLSelectElement).value })}>
      ${props.options.map(([v, text]) => html`<option value=${v}>${text}</option>`)}
    </select>
  </label>`;
}

export function Toolbar({ children }: { children: ComponentChildren }) {
  return html`<div class="toolbar">${children}</div>`;
}

/** The query parameters of a list: the route's, with the page's size. */
export function listParams(route: Route, extra: Params = {}): Params {
  return { ...Object.fromEntries(route.query), limit: 50, ...extra };
}
