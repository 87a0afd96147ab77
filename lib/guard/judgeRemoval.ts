import { GUARD_OFF } from "./constants";
import type { RemovalLimit } from "./removalLimit";
import { type SnapshotDigest, sharedCount } from "./SnapshotDigest";

/** Of the previous snapshot's ids of one kind: how many, and how many the new one no longer has. */
export interface Removal {
  previous: number;
  removed: number;
}

/**
 * The guard's verdict on a new snapshot against the previous published one:
 * - `first`: there is none (a first sync), or it is of another connector: nothing to compare;
 * - `no_users`: the previous one had no users, so no share can be taken;
 * - `off`: the guard is switched off (counted all the same, when there is something to count);
 * - `within` / `over`: compared; `over` holds the snapshot.
 */
export interface GuardVerdict {
  held: boolean;
  basis: "first" | "no_users" | "off" | "within" | "over";
  limit: RemovalLimit;
  users?: Removal;
  grants?: Removal;
}

/**
 * Whether a new snapshot removes more than `limit` percent of the previous one's users or of its
 * grants (strictly more: at 30, removing 30 of 100 passes and 31 is held).
 */
export function judgeRemoval(
  previous: SnapshotDigest | undefined,
  next: SnapshotDigest,
  limit: RemovalLimit,
): GuardVerdict {
  if (!previous || previous.connector !== next.connector)
    return { held: false, basis: "first", limit };
  return judgeRemovals(
    removal(previous.users, next.users),
    removal(previous.grants, next.grants),
    limit,
  );
}

/**
 * The rule itself, on the counts of removed users and grants of two snapshots of one connector:
 * the guard counts them from digests (`judgeRemoval`), `diff` from its comparison of the records
 * (lib/diff), so both say the same of the same two snapshots.
 */
export function judgeRemovals(users: Removal, grants: Removal, limit: RemovalLimit): GuardVerdict {
  if (users.previous === 0) return { held: false, basis: "no_users", limit };
  if (limit === GUARD_OFF) return { held: false, basis: "off", limit, users, grants };
  const over = [users, grants].some((r) => r.previous > 0 && r.removed * 100 > limit * r.previous);
  return { held: over, basis: over ? "over" : "within", limit, users, grants };
}

function removal(previous: BigUint64Array, next: BigUint64Array): Removal {
  return { previous: previous.length, removed: previous.length - sharedCount(previous, next) };
}

/** The verdict in words, e.g. "it removes 400 of 1,000 users (40%) and 0 of 3,000 grants (0%); the limit is 30%". */
export function describeVerdict(verdict: GuardVerdict): string {
  switch (verdict.basis) {
    case "first":
      return "no previous snapshot of this connector to compare with";
    case "no_users":
      return "the previous snapshot has no users to compare with";
    default: {
      const counts = `it removes ${share(verdict.users, "users")} and ${share(verdict.grants, "grants")}`;
      const limit =
        verdict.limit === GUARD_OFF ? "the guard is off" : `the limit is ${verdict.limit}%`;
      return `${counts}; ${limit}`;
    }
  }
}

function share(removal: Removal | undefined, what: string): string {
  if (!removal) return `no ${what}`;
  const percent = removal.previous === 0 ? 0 : (removal.removed * 100) / removal.previous;
  const shown = Number.isInteger(percent) ? String(percent) : percent.toFixed(1);
  return `${removal.removed.toLocaleString("en-US")} of ${removal.previous.toLocaleString("en-US")} ${what} (${shown}%)`;
}
