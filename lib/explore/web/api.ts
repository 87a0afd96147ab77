import type { AccountRow, EntitlementRow, GrantRow } from "../apiTypes";

export type { AccountRow, EntitlementRow, GrantRow };

export interface Page<Row> {
  total: number;
  offset: number;
  limit: number;
  rows: Row[];
}

export type Params = Record<string, string | number | undefined>;

/** The query string of `params`, empty values left out. */
export function queryString(params: Params): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params))
    if (value !== undefined && value !== "") search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : "";
}

/** GETs one of the page's API paths (the cookie carries the token) and returns its JSON. */
export async function getJson<T>(path: string, params: Params = {}): Promise<T> {
  const response = await fetch(`${path}${queryString(params)}`, { credentials: "same-origin" });
  const body = await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok) throw new Error(body.error ?? `HTTP ${response.status}`);
  return body as T;
}

export async function postJson<T>(path: string, body: unknown): Promise<T> {
  const response = await fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok) throw new Error(answer.error ?? `HTTP ${response.status}`);
  return answer as T;
}

export const number = (n: number) => n.toLocaleString("en-US");

/** `2026-11-21 10:00 UTC` */
export const when = (iso: string) => `${iso.slice(0, 16).replace("T", " ")} UTC`;

export const encode = encodeURIComponent;

export interface Summary {
  connector: string;
  connectorDisplay: string;
  snapshot: string;
  syncId: string;
  startedAt: string;
  finishedAt: string;
  resourceTypes: Array<{
    id: string;
    name: string;
    traits: string[];
    resources: number;
    entitlements: number;
  }>;
  accounts: number;
  disabled: number;
  entitlements: number;
  privilegedEntitlements: number;
  grants: number;
  risks: Record<"disabled_with_access" | "privileged" | "no_email", number>;
  diff: null | {
    syncId: string;
    startedAt: string;
    counts: Record<
      | "accountsAdded"
      | "accountsRemoved"
      | "accountsChanged"
      | "entitlementsAdded"
      | "entitlementsRemoved"
      | "grantsAdded"
      | "grantsRemoved",
      number
    >;
  };
  review: { keep: number; revoke: number; flag: number; grants: number };
}
