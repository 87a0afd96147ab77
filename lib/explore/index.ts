import { basename, resolve } from "node:path";
import { UsageError } from "../errors";
import type { IndexAbout } from "./buildIndex";
import { connectorOf, privilegedFor } from "./connectorOf";
import { ReviewStore } from "./ReviewStore";
import { apiRoutes } from "./routes";
import type { Explore } from "./rows";
import { SnapshotChanges } from "./SnapshotChanges";
import { indexPathOf, type PreparedIndex, SnapshotIndex } from "./SnapshotIndex";
import { SortOrders } from "./sortOrders";

export { type ExploreServer, loadAssets, startExploreServer } from "./server";
export { indexPathOf };

/** Where a snapshot's review decisions are kept: beside it. */
export const reviewPathOf = (snapshot: string) => `${snapshot}.review.json`;

/**
 * Everything the page serves, built once: the snapshot's index, its sort orders, with `old` the
 * older snapshot's index (without its search, which only the shown one needs) and the changes, and
 * the review kept beside the snapshot. Both index files are built (or found) before either is
 * read, the older one in a worker thread at the same time as the shown one (two cores; memory
 * peaks at the two builds, the older one's without search, or at the two read).
 */
export async function openExplore(snapshot: string, old?: string) {
  const prepareOld = (apart?: AbortSignal) =>
    old === undefined
      ? Promise.resolve(undefined)
      : SnapshotIndex.prepare(
          old,
          privilegedFor,
          apart ? { search: false, apart } : { search: false },
        );
  // Two names of one index file are built one after the other (the second finds the first's).
  const together =
    old !== undefined && resolve(indexPathOf(old)) !== resolve(indexPathOf(snapshot));
  const stop = new AbortController();
  const preparing = together ? prepareOld(stop.signal) : undefined;
  preparing?.catch(() => undefined); // awaited below: a failure before then is not unhandled
  let shown: PreparedIndex;
  try {
    shown = await SnapshotIndex.prepare(snapshot, privilegedFor, { search: true });
  } catch (error) {
    stop.abort();
    await preparing?.catch(() => undefined);
    throw error;
  }
  const before = await (preparing ?? prepareOld());
  const kind = (prepared: PreparedIndex) => (prepared.file.about as IndexAbout).start.connector;
  if (before && kind(before) !== kind(shown))
    throw new UsageError(
      `--diff ${old} is a ${kind(before)} snapshot and ${snapshot} a ${kind(shown)} one: compare two syncs of one connector`,
    );
  const index = SnapshotIndex.load(shown, privilegedFor, { search: true });
  const changes =
    before &&
    new SnapshotChanges(index, SnapshotIndex.load(before, privilegedFor, { search: false }));
  const { syncId, connector } = index.start;
  const review = await ReviewStore.open(reviewPathOf(snapshot), { syncId, connector });
  const explore: Explore = { index, orders: new SortOrders(index), review };
  if (changes) explore.changes = changes;
  const display = connectorOf(index.start.connector).display;
  return { explore, routes: apiRoutes(explore, display, basename(snapshot)) };
}
