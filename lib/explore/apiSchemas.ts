import * as z from "zod";

/** The review page's requests (query strings and bodies), each parsed here before it is used. */

const page = {
  limit: z.coerce.number().int().min(1).max(500).default(50),
  offset: z.coerce.number().int().min(0).default(0),
};
const dir = z.enum(["asc", "desc"]).default("asc");
const search = z.string().max(200).default("");

export const RISKS = ["disabled_with_access", "privileged", "no_email"] as const;
export type Risk = (typeof RISKS)[number];

export const accountsQuery = z.strictObject({
  q: search,
  status: z.enum(["all", "enabled", "disabled"]).default("all"),
  entitlement: z.string().min(1).max(1000).optional(),
  change: z.enum(["all", "added", "changed"]).default("all"),
  risk: z.enum(RISKS).optional(),
  sort: z.enum(["name", "login", "id", "status", "entitlements"]).default("name"),
  dir,
  ...page,
});
export type AccountsQuery = z.output<typeof accountsQuery>;

export const entitlementsQuery = z.strictObject({
  q: search,
  resourceType: z.string().min(1).max(200).optional(),
  privileged: z.enum(["all", "yes", "no"]).default("all"),
  change: z.enum(["all", "added", "changed"]).default("all"),
  sort: z.enum(["name", "id", "resource", "holders"]).default("name"),
  dir,
  ...page,
});
export type EntitlementsQuery = z.output<typeof entitlementsQuery>;

export const pageQuery = z.strictObject(page);
export type PageQuery = z.output<typeof pageQuery>;

export const changesQuery = z.strictObject({
  kind: z.enum(["accounts", "entitlements", "grants"]),
  change: z.enum(["added", "removed", "changed"]),
  ...page,
});
export type ChangesQuery = z.output<typeof changesQuery>;

export const DECISIONS = ["keep", "revoke", "flag"] as const;
export type Decision = (typeof DECISIONS)[number];

export const reviewBody = z.strictObject({
  grantId: z.string().min(1).max(1000),
  /** null clears the grant's decision. */
  decision: z.enum(DECISIONS).nullable(),
  note: z.string().max(2000).default(""),
});
export type ReviewBody = z.output<typeof reviewBody>;

export const exportQuery = z.strictObject({ format: z.enum(["csv", "json"]) });

export const emptyQuery = z.strictObject({});

/** `field: message` for each problem, e.g. `limit: Too big: expected number to be <=500`. */
export function describeIssues(error: z.ZodError, where: string): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.join(".");
      if (issue.code === "unrecognized_keys")
        return `${where} has unknown ${issue.keys.length > 1 ? "fields" : "field"} ${issue.keys.join(", ")}`;
      return `${where} ${path || "(whole)"}: ${issue.message}`;
    })
    .join("; ");
}
