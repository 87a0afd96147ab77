import { fold } from "./foldText";

/**
 * A folded text's sort key: each run of digits padded to one width so `u9` sorts before `u10`.
 * Compared as plain strings: a collator's compare made sorting 100,000 names take seconds.
 */
const padDigits = (folded: string) => folded.replace(/\d+/g, (d) => d.padStart(12, "0"));

/** Positions `0..keys.length` sorted by `compare`, ties by position (a stable, total order). */
function orderBy(count: number, compare: (a: number, b: number) => number): Int32Array {
  const order = new Int32Array(count);
  for (let i = 0; i < count; i++) order[i] = i;
  return order.sort((a, b) => compare(a, b) || a - b);
}

/**
 * The positions of folded texts in their sort order (ties by position): a stable merge sort of
 * the positions by their keys compared as strings, written out (a comparison function handed to
 * `sort` cost twice as much: 1,000,000 names, three columns), which only copies two runs already in
 * order (a column in file order, as ids often are, costs one pass a level).
 */
function sortedOrder(folded: readonly string[]): Int32Array {
  const keys = folded.map(padDigits);
  const n = keys.length;
  let order = new Int32Array(n);
  let spare = new Int32Array(n);
  for (let lo = 0; lo < n; lo += RUN) {
    const hi = Math.min(lo + RUN, n);
    for (let i = lo; i < hi; i++) {
      const key = keys[i] as string;
      let j = i - 1;
      for (; j >= lo && (keys[order[j] as number] as string) > key; j--)
        order[j + 1] = order[j] as number;
      order[j + 1] = i;
    }
  }
  for (let width = RUN; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      let k = lo;
      if (
        mid < hi &&
        (keys[order[mid - 1] as number] as string) > (keys[order[mid] as number] as string)
      )
        while (i < mid && j < hi)
          spare[k++] =
            (keys[order[j] as number] as string) < (keys[order[i] as number] as string)
              ? (order[j++] as number)
              : (order[i++] as number);
      spare.set(order.subarray(i, mid), k);
      spare.set(order.subarray(j, hi), k + mid - i);
    }
    [order, spare] = [spare, order];
  }
  return order;
}

/** Positions sorted by insertion in runs of RUN before the runs are merged. */
const RUN = 32;

/** The inverse of a permutation: each position's place in `order` (its rank). */
function inverse(order: Int32Array): Int32Array {
  const rank = new Int32Array(order.length);
  order.forEach((position, r) => {
    rank[position] = r;
  });
  return rank;
}

/** Each text's rank among them all: sorted once by key, then compared as numbers. */
const ranks = (folded: readonly string[]) => inverse(sortedOrder(folded));

export const ACCOUNT_SORTS = ["name", "login", "id", "status", "entitlements"] as const;
export type AccountSort = (typeof ACCOUNT_SORTS)[number];
export type EntitlementSort = "name" | "id" | "resource" | "holders";

/**
 * The accounts' orders (positions in `index.accounts`) by every sortable column, computed once
 * when the index is built: `column(0|1|2)` gives every account's folded name, login or id (one
 * column at a time, so only one is held at once).
 */
export function accountOrders(
  column: (field: 0 | 1 | 2) => string[],
  disabled: (position: number) => boolean,
  held: (position: number) => number,
): Record<AccountSort, Int32Array> {
  const name = sortedOrder(column(0));
  const n = name.length;
  // Disabled first, each part by name: one pass over the name order for each part.
  const status = new Int32Array(n);
  let at = 0;
  for (const wanted of [true, false])
    for (const p of name) if (disabled(p) === wanted) status[at++] = p;
  // By entitlements held, then by name: one number a position (held * n + name rank), sorted as
  // numbers (a typed array's own sort, no comparison function).
  const nameRank = inverse(name);
  const keys = Float64Array.from({ length: n }, (_, p) => held(p) * n + (nameRank[p] as number));
  keys.sort();
  const entitlements = Int32Array.from(keys, (k) => name[k % n] as number);
  return {
    name,
    login: sortedOrder(column(1)),
    id: sortedOrder(column(2)),
    status,
    entitlements,
  };
}

/**
 * Every sortable column's order, so a page of a sorted, filtered list is one pass over an order
 * with the filter (no sort per request): the accounts' from the index file, the entitlements'
 * (thousands) computed at start. Accounts are positions in `index.accounts`; entitlements their
 * numbers.
 */
/** What the orders are computed from (a `SnapshotIndex`, named by shape to keep imports one-way). */
interface SortedIndex {
  readonly accountOrders: Record<AccountSort, Int32Array>;
  readonly entitlements: readonly {
    displayName: string;
    id: string;
    resource: { type: string };
  }[];
  readonly holderCount: Int32Array;
}

export class SortOrders {
  readonly accounts: Record<AccountSort, Int32Array>;
  readonly entitlements: Record<EntitlementSort, Int32Array>;

  constructor(index: SortedIndex) {
    this.accounts = index.accountOrders;
    const m = index.entitlements.length;
    const eName = ranks(index.entitlements.map((e) => fold(e.displayName)));
    const eId = ranks(index.entitlements.map((e) => fold(e.id)));
    const resource = ranks(
      index.entitlements.map((e) => `${fold(e.resource.type)}\u0001${fold(e.displayName)}`),
    );
    const byEName = (a: number, b: number) => (eName[a] as number) - (eName[b] as number);
    this.entitlements = {
      name: orderBy(m, byEName),
      id: orderBy(m, (a, b) => (eId[a] as number) - (eId[b] as number)),
      resource: orderBy(m, (a, b) => (resource[a] as number) - (resource[b] as number)),
      holders: orderBy(
        m,
        (a, b) =>
          (index.holderCount[a] as number) - (index.holderCount[b] as number) || byEName(a, b),
      ),
    };
  }
}

/** One page of `order` (reversed for `desc`) among the positions `keep` accepts, and how many it accepts. */
export function pageOf(
  order: Int32Array,
  dir: "asc" | "desc",
  keep: (position: number) => boolean,
  offset: number,
  limit: number,
): { total: number; positions: number[] } {
  const positions: number[] = [];
  let total = 0;
  const n = order.length;
  for (let i = 0; i < n; i++) {
    const position = order[dir === "asc" ? i : n - 1 - i] as number;
    if (!keep(position)) continue;
    if (total >= offset && positions.length < limit) positions.push(position);
    total++;
  }
  return { total, positions };
}
