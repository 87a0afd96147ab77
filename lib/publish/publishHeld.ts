import type { SnapshotDigest } from "../guard";
import type { GuardStore, Publisher } from "./types";

export interface HeldRelease<R> {
  store: GuardStore;
  publish: Publisher<R>;
  /**
   * The held sync the release was asked for, when the asker named one (the service's
   * `release --service`): another one held now, or none, is answered `superseded`.
   */
  syncId?: string;
}

export type ReleaseOutcome<R> =
  | { status: "released"; held: SnapshotDigest; published: R }
  | { status: "nothing_held" | "superseded"; detail: string };

/**
 * Publishes the held snapshot as it is (no sync) under its own sync id, and records it as the
 * one the next snapshot is compared with (which removes it from the store: released once).
 */
export async function publishHeld<R>(release: HeldRelease<R>): Promise<ReleaseOutcome<R>> {
  const { store, syncId } = release;
  const held = await store.held();
  if (syncId !== undefined && held?.syncId !== syncId) {
    const detail = held
      ? `sync ${held.syncId} is held now, not ${syncId}; release again to upload it`
      : `sync ${syncId} is no longer held: a later sync replaced it`;
    return { status: "superseded", detail };
  }
  if (!held) return { status: "nothing_held", detail: "no snapshot is held" };
  const published = await store.withHeldSnapshot((file) => release.publish(file, held.syncId));
  await store.recordPublished?.(held);
  return { status: "released", held, published };
}
