import type { ChangesQuery, ReviewBody } from "./apiSchemas";
import { BadRequest } from "./requestErrors";
import { accountRow, type Explore, entitlementRow, type GrantRow, grantRow } from "./rows";

/** The header and counts: the sync, resources by type, entitlements by resource type, risks. */
export function summary(explore: Explore, connectorDisplay: string, snapshotName: string) {
  return {
    ...snapshotCounts(explore, connectorDisplay, snapshotName),
    review: { ...explore.review.counts(), grants: explore.index.grantCount },
  };
}

/** What does not change while the page runs, counted once (a pass over 100,000 accounts). */
const countsOnce = new WeakMap<Explore, ReturnType<typeof countSnapshot>>();
function snapshotCounts(explore: Explore, connectorDisplay: string, snapshotName: string) {
  let counts = countsOnce.get(explore);
  if (!counts) {
    counts = countSnapshot(explore, connectorDisplay, snapshotName);
    countsOnce.set(explore, counts);
  }
  return counts;
}

function countSnapshot(explore: Explore, connectorDisplay: string, snapshotName: string) {
  const { index, changes } = explore;
  const byType = new Map<string, number>();
  for (let n = 0; n < index.resourceCount; n++) {
    const type = index.typeOf(n);
    byType.set(type, (byType.get(type) ?? 0) + 1);
  }
  let disabledWithAccess = 0;
  let privilegedHolders = 0;
  let noEmail = 0;
  let disabled = 0;
  for (const a of index.accounts) {
    if (index.isDisabled(a)) {
      disabled++;
      if (index.holdingCount[a]) disabledWithAccess++;
    }
    if (index.privilegedCount[a]) privilegedHolders++;
    if (!index.hasEmail(a)) noEmail++;
  }
  return {
    connector: index.start.connector,
    connectorDisplay,
    snapshot: snapshotName,
    syncId: index.start.syncId,
    startedAt: index.start.startedAt,
    finishedAt: index.end.finishedAt,
    resourceTypes: index.resourceTypes.map((t) => ({
      id: t.id,
      name: t.displayName,
      traits: t.traits,
      resources: byType.get(t.id) ?? 0,
      entitlements: index.entitlements.filter((e) => e.resource.type === t.id).length,
    })),
    accounts: index.accounts.length,
    disabled,
    entitlements: index.entitlements.length,
    privilegedEntitlements: index.privileged.reduce((n, x) => n + x, 0),
    grants: index.grantCount,
    risks: {
      disabled_with_access: disabledWithAccess,
      privileged: privilegedHolders,
      no_email: noEmail,
    },
    diff: changes
      ? {
          syncId: changes.old.start.syncId,
          startedAt: changes.old.start.startedAt,
          counts: changes.counts,
        }
      : null,
  };
}

/** One page of the Changes tab: accounts, entitlements or grants added, removed or changed. */
export function listChanges(explore: Explore, query: ChangesQuery) {
  const changes = explore.changes;
  if (!changes) throw new BadRequest("there is nothing to compare; start explore with --diff OLD");
  const { offset, limit } = query;
  const slice = <T>(all: readonly number[], row: (n: number) => T) => ({
    total: all.length,
    offset,
    limit,
    rows: all.slice(offset, offset + limit).map(row),
  });
  const key = `${query.kind}:${query.change}`;
  switch (key) {
    case "accounts:added":
      return slice(
        [...explore.index.accounts].filter((a) => changes.resourceAdded[a]),
        (a) => accountRow(explore, a),
      );
    case "accounts:removed":
      return slice(
        changes.removedResources.filter((r) => changes.old.isAccount(r)),
        (r) => accountRow(explore, r, true),
      );
    case "accounts:changed":
      return slice([...changes.accountFields.keys()], (a) => ({
        ...accountRow(explore, a),
        fields: changes.accountFields.get(a),
      }));
    case "entitlements:added":
      return slice(
        [...changes.entitlementAdded.keys()].filter((e) => changes.entitlementAdded[e]),
        (e) => entitlementRow(explore, e),
      );
    case "entitlements:removed":
      return slice(changes.removedEntitlements, (e) => entitlementRow(explore, e, true));
    case "grants:added":
      return slice(changes.addedGrants, (g) =>
        grantRow(explore, g, explore.index.grantPrincipal[g] as number, undefined),
      );
    case "grants:removed":
      return slice(changes.removedGrants, (g) =>
        grantRow(explore, g, changes.old.grantPrincipal[g] as number, undefined, true),
      );
    default:
      throw new BadRequest(`query change: ${query.kind} are added or removed, not ${query.change}`);
  }
}

/** Records a decision on a grant of the shown snapshot (not one only the older snapshot had). */
export async function decide(explore: Explore, body: ReviewBody) {
  if (explore.index.grantNamed(body.grantId) === undefined)
    throw new BadRequest(`body grantId: no grant has the id "${body.grantId}" in this snapshot`);
  await explore.review.decide(body.grantId, body.decision, body.note);
  return { grantId: body.grantId, review: explore.review.decisions.get(body.grantId) ?? null };
}

/** The review's decisions, each with the grant's account and entitlement, in grant id order. */
export function reviewedGrants(
  explore: Explore,
): Array<GrantRow & { account: { login: string; email: string; status: string } }> {
  const { index } = explore;
  return [...explore.review.decisions.keys()].sort().flatMap((grantId) => {
    const grant = index.grantNamed(grantId);
    if (grant === undefined) return [];
    const holder = index.grantPrincipal[grant] as number;
    const row = grantRow(explore, grant, holder, undefined);
    const account = accountRow(explore, holder);
    return [
      {
        ...row,
        account: {
          ...row.account,
          login: account.login,
          email: account.email,
          status: account.status,
        },
      },
    ];
  });
}

const CSV_COLUMNS = [
  "grant_id",
  "account_type",
  "account_id",
  "account",
  "login",
  "email",
  "status",
  "entitlement_id",
  "entitlement",
  "resource",
  "privileged",
  "change",
  "decision",
  "note",
  "decided_at",
] as const;

/** A CSV field: quoted when it holds a quote, comma or line break; a leading =+-@ made text. */
function csvField(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** The review as CSV (one row per decided grant) or JSON (the sync, the counts and the rows). */
export function exportReview(explore: Explore, format: "csv" | "json"): string {
  const rows = reviewedGrants(explore);
  if (format === "json") {
    const { start } = explore.index;
    return `${JSON.stringify(
      {
        snapshot: { connector: start.connector, syncId: start.syncId, startedAt: start.startedAt },
        exportedAt: new Date().toISOString(),
        counts: { ...explore.review.counts(), grants: explore.index.grantCount },
        decisions: rows,
      },
      null,
      2,
    )}\n`;
  }
  const lines = rows.map((row) =>
    [
      row.grantId,
      row.account.type,
      row.account.id,
      row.account.name,
      row.account.login,
      row.account.email,
      row.account.status,
      row.entitlement.id,
      row.entitlement.name,
      row.entitlement.resource.name,
      row.entitlement.privileged ? "yes" : "no",
      row.change ?? "",
      row.review?.decision ?? "",
      row.review?.note ?? "",
      row.review?.decidedAt ?? "",
    ]
      .map(csvField)
      .join(","),
  );
  return `${[CSV_COLUMNS.join(","), ...lines].join("\r\n")}\r\n`;
}
