import { readFile, rm } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import lockfile from "proper-lockfile";
import * as z from "zod";
import { ConfigError } from "../errors";
import { SERVICE_VARIABLES } from "./constants";
import { STATE_DIR_ELSEWHERE, writeWhole } from "./writeWhole";

// proper-lockfile loads signal-exit, whose handler for SIGXFSZ re-raises the signal when it is the
// only listener: a file over `ulimit -f` would then kill the service (exit 153) instead of failing
// its write with EFBIG, which names the file. A listener of our own keeps Node's default (ignored).
process.on("SIGXFSZ", () => {});

/** Below the state directory: the lock (a directory, made atomically) and who holds it. */
export const LOCK_NAME = "service.lock";
export const LOCK_OWNER_NAME = "service.lock.owner.json";
/**
 * The holder refreshes the lock's time every LOCK_UPDATE_MS; a lock not refreshed for
 * LOCK_STALE_MS is a dead holder's (one on another machine, where no pid can be asked), and taken.
 */
export const LOCK_STALE_MS = 60_000;
export const LOCK_UPDATE_MS = 10_000;

const owner = z.object({
  pid: z.number().int().positive(),
  hostId: z.string(),
  hostname: z.string(),
  since: z.string(),
});
type LockOwner = z.infer<typeof owner>;

/** Another service holds the state directory (exit 2): names it and that service. */
export class StateDirInUseError extends ConfigError {
  override name = "StateDirInUseError";
  override readonly code: string = "state_dir_in_use";
}

export interface StateDirLock {
  /** Gives the directory up (at the end of the stop); never throws. */
  release(): Promise<void>;
}

/**
 * One service per state directory (docs/service.md): the lock is `proper-lockfile`'s
 * directory in the state directory, its time refreshed while the service runs. A second service
 * refuses to start, naming the directory and the holder (pid, host id, machine). A lock a crashed
 * holder left (kill -9, a power cut) does not block a restart: on the same machine its pid is
 * asked (dead, or this very pid in a restarted container: taken at once), elsewhere it is taken
 * once it has not been refreshed for LOCK_STALE_MS. `onLost` is called if the lock is taken away
 * or cannot be refreshed (the event loop stalled past the stale time): the service must stop.
 */
export async function lockStateDir(
  stateDir: string,
  hostId: string,
  onLost: (error: Error) => void,
): Promise<StateDirLock> {
  const lockPath = join(stateDir, LOCK_NAME);
  const ownerPath = join(stateDir, LOCK_OWNER_NAME);
  const take = () =>
    lockfile.lock(stateDir, {
      lockfilePath: lockPath,
      realpath: false,
      stale: LOCK_STALE_MS,
      update: LOCK_UPDATE_MS,
      onCompromised: onLost,
    });
  let unlock: () => Promise<void>;
  try {
    unlock = await take();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ELOCKED") throw error;
    const holder = await readOwner(ownerPath);
    if (!holder || !holderIsDead(holder)) throw inUse(stateDir, holder);
    // The holder died without giving the lock up: take it over (once; a live rival wins then).
    await rm(lockPath, { recursive: true, force: true });
    try {
      unlock = await take();
    } catch (again) {
      if ((again as NodeJS.ErrnoException).code !== "ELOCKED") throw again;
      throw inUse(stateDir, await readOwner(ownerPath));
    }
  }
  const me: LockOwner = {
    pid: process.pid,
    hostId,
    hostname: hostname(),
    since: new Date().toISOString(),
  };
  const ownerFile = {
    what: "the record of which service holds the state directory",
    path: ownerPath,
    elsewhere: STATE_DIR_ELSEWHERE,
    outcome: "the service did not start",
  };
  try {
    await writeWhole(ownerFile, `${JSON.stringify(me)}\n`, 0o644);
  } catch (error) {
    await unlock().catch(() => {});
    throw error;
  }
  return {
    release: async () => {
      await rm(ownerPath, { force: true }).catch(() => {});
      await unlock().catch(() => {});
    },
  };
}

async function readOwner(path: string): Promise<LockOwner | undefined> {
  try {
    const parsed = owner.safeParse(JSON.parse(await readFile(path, "utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Only a holder on this machine can be asked; this pid is a previous life of this container's. */
function holderIsDead(holder: LockOwner): boolean {
  if (holder.hostname !== hostname()) return false;
  if (holder.pid === process.pid) return true;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

function inUse(stateDir: string, holder: LockOwner | undefined): StateDirInUseError {
  const who = holder
    ? `the service with pid ${holder.pid} and host id ${holder.hostId} on ${holder.hostname} (running since ${holder.since})`
    : "another service (it is starting, or its record of itself is gone)";
  return new StateDirInUseError([
    {
      variable: SERVICE_VARIABLES.stateDir,
      message: `${stateDir} is in use by ${who}; one service per state directory: stop that service, or give this one a CONNECTOR_STATE_DIR of its own. A lock a crashed service left on another machine is taken after ${LOCK_STALE_MS / 1000} s without refresh`,
    },
  ]);
}
