import type { PlatformFaultKind, PlatformFaultOptions, PlatformRoute } from "./types";

export interface QueuedFault extends PlatformFaultOptions {
  kind: PlatformFaultKind;
}

/** Faults waiting per route, applied in order to the next requests: no randomness. */
export class FaultQueue {
  readonly #pending = new Map<PlatformRoute, QueuedFault[]>();

  add(route: PlatformRoute, count: number, fault: QueuedFault): void {
    if (!Number.isInteger(count) || count < 0) {
      throw new RangeError(`fault count must be a whole number, got ${count}`);
    }
    const queue = this.#pending.get(route) ?? [];
    for (let i = 0; i < count; i++) queue.push({ ...fault });
    this.#pending.set(route, queue);
  }

  /** The fault for the request that just arrived on `route`, if one is waiting. */
  take(route: PlatformRoute): QueuedFault | undefined {
    return this.#pending.get(route)?.shift();
  }
}
