/**
 * One guarded publish (docs/removal-guard.md): the step after a complete snapshot, and the
 * release of a held one, for the CLI, the service and the cloud. Each runtime supplies a
 * `GuardStore` and a `Publisher`; the removal guard's verdict is taken here and nowhere else.
 */
export { type GuardedPublish, type PublishOutcome, publishGuarded } from "./publishGuarded";
export { type HeldRelease, publishHeld, type ReleaseOutcome } from "./publishHeld";
export type { GuardStore, Publisher } from "./types";
