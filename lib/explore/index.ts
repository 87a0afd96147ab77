import { basename } from "node:path";
import { CONNECTORS } from "../connectors";
import { UsageError } from "../errors";
import type { IndexAbout } from "./buildIndex";
import { ReviewStore } from "./ReviewStore";
import { apiRoutes } from "./routes";
import type { Explore } from "./rows";
import { SnapshotChanges } from "./SnapshotChanges";
import { indexPathOf, type PreparedIndex, SnapshotIndex } from "./SnapshotIndex";
import { SortOrders } from "./sortOrders";

export { type ExploreServer, loadAssets, startExploreServer } from "./server";
export { indexPathOf };

const connectorOf = (name: string) => {
  const connector = CONNECTORS.find((c) => c.name === name);
  if (!connector)
    throw new UsageError(
      `the snapshot is of connector "${name}", which this version does not know (${CONNECTORS.map((c) => c.name).join(", ")})`,
    );
  return connector;
};

/** Where a snapshot's review decisions are kept: beside it. */
export const reviewPathOf = (snapshot: string) => `${snapshot}.review.json`;

/**
 * Everything the page serves, built once: the snapshot's index, its sort orders, with `old` the
 * older snapshot's index (without its search, which only the shown one needs) and the changes, and
 * the review kept beside the snapshot. Both index files are built (or found) before either is
 * read, so memory peaks at the larger build or at the two read, not at one read and one build.
 */
export async function openExplore(snapshot: string, old?: string) {
  const privilegedFor = (name: string) => connectorOf(name).privileged;
  const shown = await SnapshotIndex.prepare(snapshot, privilegedFor);
  const before = old === undefined ? undefined : await SnapshotIndex.prepare(old, privilegedFor);
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
