/**
 * The shapes the page's API answers with, shared by the server (lib/explore) and the front end
 * (lib/explore/web, type-checked on its own with the browser's types): types only, no imports.
 */

export type Decision = "keep" | "revoke" | "flag";

export interface DecisionRecord {
  decision: Decision;
  note: string;
  decidedAt: string;
}

export type Change = "added" | "removed" | "changed";

export interface ResourceRef {
  type: string;
  typeName: string;
  id: string;
  name: string;
}

export interface AccountRow extends ResourceRef {
  login: string;
  email: string;
  status: string;
  entitlements: number;
  privileged: number;
  change?: Change;
  grantsAdded?: number;
  grantsRemoved?: number;
}

export interface EntitlementRow {
  id: string;
  name: string;
  slug: string;
  resource: ResourceRef;
  privileged: boolean;
  holders: number;
  change?: Change;
  holdersAdded?: number;
  holdersRemoved?: number;
}

/** A grant as a row: who holds what, how (directly or through a team), its change and decision. */
export interface GrantRow {
  grantId: string;
  account: ResourceRef;
  entitlement: { id: string; name: string; privileged: boolean; resource: ResourceRef };
  via?: ResourceRef;
  change?: Change;
  review?: DecisionRecord;
}
