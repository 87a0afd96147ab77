import { HEALTH_STALE_AFTER_MS } from "./constants";
import { writeWhole } from "./writeWhole";

/**
 * What the health file says. A probe needs only `staleAfter`: the service rewrites the file well
 * before then for as long as it runs (during a long sync too), so a file past it means a hung or
 * dead process. `status` is for people: `degraded` while the platform cannot be reached or
 * rejects the credentials; the last sync's outcome is beside it.
 */
export interface HealthReport {
  status: "starting" | "ok" | "degraded" | "stopping" | "stopped";
  /** What the service is doing: `connecting`, `idle`, `syncing`, `task`, `waiting`. */
  phase: string;
  connector: string;
  hostId: string;
  version: string;
  pid: number;
  startedAt: string;
  updatedAt: string;
  staleAfter: string;
  nextSyncAt?: string;
  lastSync?: {
    syncId: string;
    /** `held`: complete, but held by the mass-deletion guard until released. */
    outcome: "uploaded" | "error" | "held";
    at: string;
    detail?: string;
  };
  platform: { reachable: boolean; problem?: string; since?: string };
  /** A failure of this host that the loop is waiting out (e.g. the state file cannot be written). */
  problem?: string;
  /** The process's resident memory and V8 heap in use, in MiB: for watching it over months. */
  memoryMiB: { rss: number; heapUsed: number };
}

export type HealthState = Omit<HealthReport, "updatedAt" | "staleAfter" | "pid" | "memoryMiB">;

const mib = (bytes: number) => Math.round((bytes / 1_048_576) * 10) / 10;

/**
 * Writes the health file whole (`writeWhole`: temporary name, then rename), so a probe never
 * reads half. A write the system refuses is not the service's end: `write` resolves with the
 * `WriteFailedError` naming the file and the fix, and the next write tries again.
 */
export class HealthFile {
  readonly path: string;
  #writing: Promise<void> = Promise.resolve();

  constructor(path: string) {
    this.path = path;
  }

  /**
   * Writes `state`; resolves with the error when the file cannot be written (a probe then sees it
   * stale), else undefined.
   */
  write(state: HealthState, now = Date.now()): Promise<unknown> {
    const memory = process.memoryUsage();
    const report: HealthReport = {
      ...state,
      memoryMiB: { rss: mib(memory.rss), heapUsed: mib(memory.heapUsed) },
      pid: process.pid,
      updatedAt: new Date(now).toISOString(),
      staleAfter: new Date(now + HEALTH_STALE_AFTER_MS).toISOString(),
    };
    const file = {
      what: "the health file",
      path: this.path,
      elsewhere: "point CONNECTOR_HEALTH_FILE at another filesystem",
      outcome: `a probe sees it go stale after ${HEALTH_STALE_AFTER_MS / 1000} s; the service keeps running and writes it again at the next change`,
    };
    // Readable by a probe that runs as another user, as before.
    const write = () => writeWhole(file, `${JSON.stringify(report)}\n`, 0o644);
    this.#writing = this.#writing.then(write, write);
    return this.#writing.then(
      () => undefined,
      (error: unknown) => error,
    );
  }
}
