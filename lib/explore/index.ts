import { basename } from "node:path";
import { CONNECTORS } from "../connectors";
import { UsageError } from "../errors";
import { ReviewStore } from "./ReviewStore";
import { apiRoutes } from "./routes";
import type { Explore } from "./rows";
import { SnapshotChanges } from "./SnapshotChanges";
import { indexPathOf, SnapshotIndex } from "./SnapshotIndex";
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
 * older snapshot's index and the changes, and the review kept beside the snapshot.
 */
export async function openExplore(snapshot: string, old?: string) {
  const privilegedFor = (name: string) => connectorOf(name).privileged;
  const index = await SnapshotIndex.open(snapshot, privilegedFor);
  let changes: SnapshotChanges | undefined;
  if (old !== undefined) {
    const before = await SnapshotIndex.open(old, privilegedFor);
    if (before.start.connector !== index.start.connector)
      throw new UsageError(
        `--diff ${old} is a ${before.start.connector} snapshot and ${snapshot} a ${index.start.connector} one: compare two syncs of one connector`,
      );
    changes = new SnapshotChanges(index, before);
  }
  const { syncId, connector } = index.start;
  const review = await ReviewStore.open(reviewPathOf(snapshot), { syncId, connector });
  const explore: Explore = { index, orders: new SortOrders(index), review };
  if (changes) explore.changes = changes;
  const display = connectorOf(index.start.connector).display;
  return { explore, routes: apiRoutes(explore, display, basename(snapshot)) };
}
