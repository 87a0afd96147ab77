import type { AccountRow, EntitlementRow, GrantRow } from "../apiTypes";
import { accessToken, forgetToken, NO_TOKEN, TOKEN_REFUSED } from "./accessToken";

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

/**
 * Calls one of the page's API paths with the token as `Authorization: Bearer` (never a cookie:
 * `credentials: "omit"`, so one an older version set is not sent either). A 401 forgets the token.
 */
async function call(path: string, init: RequestInit = {}): Promise<Response> {
  const token = accessToken();
  if (token === null) {
    dispatchEvent(new Event(TOKEN_REFUSED));
    throw new Error(NO_TOKEN);
  }
  const response = await fetch(path, {
    ...init,
    credentials: "omit",
    headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}` },
  });
  if (response.status === 401) {
    forgetToken();
    dispatchEvent(new Event(TOKEN_REFUSED));
  }
  return response;
}

async function json<T>(response: Response): Promise<T> {
  const body = await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok) throw new Error(body.error ?? `HTTP ${response.status}`);
  return body as T;
}

/** GETs one of the page's API paths and returns its JSON. */
export async function getJson<T>(path: string, params: Params = {}): Promise<T> {
  return json<T>(await call(`${path}${queryString(params)}`));
}

export async function postJson<T>(path: string, body: unknown): Promise<T> {
  return json<T>(
    await call(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
}

/**
 * Downloads a file the API serves (the review's export): fetched with the token, then saved
 * from a Blob URL under the name the server gives in Content-Disposition.
 */
export async function download(path: string, params: Params = {}): Promise<void> {
  const response = await call(`${path}${queryString(params)}`);
  if (!response.ok) await json(response);
  const disposition = response.headers.get("content-disposition") ?? "";
  const name = /filename="([^"]+)"/.exec(disposition)?.[1] ?? "download";
  const url = URL.createObjectURL(await response.blob());
  const link = Object.assign(document.createElement("a"), { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  // The browser has started the download from the click; the URL is released after it.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
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
