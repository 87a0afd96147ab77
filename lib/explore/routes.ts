import type * as z from "zod";
import { accountDetail, listAccounts } from "./accountViews";
import {
  accountsQuery,
  changesQuery,
  describeIssues,
  emptyQuery,
  entitlementsQuery,
  exportQuery,
  pageQuery,
  reviewBody,
} from "./apiSchemas";
import { entitlementDetail, listEntitlements } from "./entitlementViews";
import { decide, exportReview, listChanges, summary } from "./overviewViews";
import { BadRequest } from "./requestErrors";
import type { Explore } from "./rows";

/** An answer: JSON, or a file to download. */
export type Answer =
  | { json: unknown }
  | { download: string; contentType: string; filename: string };

export interface Request {
  params: string[];
  query: URLSearchParams;
  body: unknown;
}

type Handler = (request: Request) => Answer | Promise<Answer>;

export interface Route {
  path: RegExp;
  methods: Partial<Record<"GET" | "POST", Handler>>;
}

/** The query string as an object; a parameter given twice is refused (which one would count?). */
function parseQuery<T extends z.ZodType>(schema: T, query: URLSearchParams): z.output<T> {
  const fields: Record<string, string> = {};
  for (const [name, value] of query) {
    if (name in fields) throw new BadRequest(`query ${name} is given twice; give it once`);
    fields[name] = value;
  }
  const parsed = schema.safeParse(fields);
  if (!parsed.success) throw new BadRequest(describeIssues(parsed.error, "query"));
  return parsed.data;
}

function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new BadRequest(describeIssues(parsed.error, "body"));
  return parsed.data;
}

/** The page's API: every path, its methods, and what each parses. */
export function apiRoutes(
  explore: Explore,
  connectorDisplay: string,
  snapshotName: string,
): Route[] {
  const segment = "([^/]+)";
  return [
    {
      path: /^\/api\/summary$/,
      methods: {
        GET: ({ query }) => {
          parseQuery(emptyQuery, query);
          return { json: summary(explore, connectorDisplay, snapshotName) };
        },
      },
    },
    {
      path: /^\/api\/accounts$/,
      methods: {
        GET: ({ query }) => ({ json: listAccounts(explore, parseQuery(accountsQuery, query)) }),
      },
    },
    {
      path: new RegExp(`^/api/accounts/${segment}/${segment}$`),
      methods: {
        GET: ({ params: [type, id], query }) => {
          parseQuery(emptyQuery, query);
          return { json: accountDetail(explore, type as string, id as string) };
        },
      },
    },
    {
      path: /^\/api\/entitlements$/,
      methods: {
        GET: ({ query }) => ({
          json: listEntitlements(explore, parseQuery(entitlementsQuery, query)),
        }),
      },
    },
    {
      path: new RegExp(`^/api/entitlements/${segment}$`),
      methods: {
        GET: ({ params: [id], query }) => ({
          json: entitlementDetail(explore, id as string, parseQuery(pageQuery, query)),
        }),
      },
    },
    {
      path: /^\/api\/changes$/,
      methods: {
        GET: ({ query }) => ({ json: listChanges(explore, parseQuery(changesQuery, query)) }),
      },
    },
    {
      path: /^\/api\/review$/,
      methods: {
        POST: async ({ query, body }) => {
          parseQuery(emptyQuery, query);
          return { json: await decide(explore, parseBody(reviewBody, body)) };
        },
      },
    },
    {
      path: /^\/api\/review\/export$/,
      methods: {
        GET: ({ query }) => {
          const { format } = parseQuery(exportQuery, query);
          const name = `review-${explore.index.start.connector}-${explore.index.start.syncId}`;
          return {
            download: exportReview(explore, format),
            contentType: format === "csv" ? "text/csv; charset=utf-8" : "application/json",
            filename: `${name.replace(/[^A-Za-z0-9._-]/g, "_")}.${format}`,
          };
        },
      },
    },
  ];
}
