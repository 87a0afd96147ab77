import { rename, writeFile } from "node:fs/promises";
import { HEALTH_STALE_AFTER_MS } from "./constants";

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

/** Writes the health file whole (temporary name, then rename), so a probe never reads half. */
export class HealthFile {
  readonly path: string;
  #writing: Promise<void> = Promise.resolve();

  constructor(path: string) {
    this.path = path;
  }

  /** Writes `state`; resolves false when the file cannot be written (a probe then sees it stale). */
  write(state: HealthState, now = Date.now()): Promise<boolean> {
    const memory = process.memoryUsage();
    const report: HealthReport = {
      ...state,
      memoryMiB: { rss: mib(memory.rss), heapUsed: mib(memory.heapUsed) },
      pid: process.pid,
      updatedAt: new Date(now).toISOString(),
      staleAfter: new Date(now + HEALTH_STALE_AFTER_MS).toISOString(),
    };
    const write = async () => {
      const temp = `${this.path}.${process.pid}.tmp`;
      await writeFile(temp, `${JSON.stringify(report)}\n`);
      await rename(temp, this.path);
    };
    this.#writing = this.#writing.then(write, write);
    return this.#writing.then(
      () => true,
      () => false,
    );
  }
}
