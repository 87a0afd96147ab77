import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { UsageError } from "../errors";
import { SnapshotInputError } from "../snapshot/errors";
import { registerTempFile, unregisterTempFile } from "../snapshot/tempFiles";
import { tempPathsOf } from "./indexFile";

/** What the worker builds: the index of `snapshot` at `path` (`buildIndexFile`). */
export interface ApartRequest {
  snapshot: string;
  path: string;
  search: boolean;
}

/** The worker's answer: built, or the build's error as data (an error loses its class on the way). */
export type ApartAnswer = { built: true } | { failed: ApartFailure };

interface ApartFailure {
  kind: "snapshot" | "usage" | "other";
  message: string;
  code?: string;
}

/** The worker's script: bundled beside the command line (scripts/build.mjs). */
const WORKER = new URL("./explore-index-worker.js", import.meta.url);

/** Whether the worker's script is there: in the bundle, not when run from the sources (tests). */
export const canBuildApart = (): boolean => existsSync(fileURLToPath(WORKER));

/**
 * Builds an index in a worker thread (lib/explore/indexWorker.ts), beside whatever this thread
 * does: `--diff`'s two snapshots are read at once, on two cores. Its errors come back as the
 * same classes. The index's temporary files are registered here (a worker sees no signal), so a
 * signal that ends the process removes it; `stop` ends the worker and removes it too.
 */
export async function buildApart(request: ApartRequest, stop: AbortSignal): Promise<void> {
  const temps = tempPathsOf(request.path);
  for (const temp of temps) registerTempFile(temp);
  const worker = new Worker(WORKER, { workerData: request });
  const end = () => void worker.terminate();
  stop.addEventListener("abort", end, { once: true });
  try {
    const answer = await new Promise<ApartAnswer>((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`the index worker ended (exit ${code})`)));
    });
    if ("failed" in answer) throw errorOf(answer.failed);
  } finally {
    stop.removeEventListener("abort", end);
    await worker.terminate();
    for (const temp of temps) {
      await rm(temp, { force: true });
      unregisterTempFile(temp);
    }
  }
}

/** A build's error as the worker sends it. */
export function failureOf(error: unknown): ApartFailure {
  const message = error instanceof Error ? error.message : String(error);
  if (SnapshotInputError.is(error)) return { kind: "snapshot", message };
  if (UsageError.is(error)) return { kind: "usage", message };
  const code = (error as NodeJS.ErrnoException)?.code;
  return typeof code === "string" ? { kind: "other", message, code } : { kind: "other", message };
}

function errorOf(failure: ApartFailure): Error {
  if (failure.kind === "snapshot") return new SnapshotInputError(failure.message);
  if (failure.kind === "usage") return new UsageError(failure.message);
  return Object.assign(new Error(failure.message), failure.code ? { code: failure.code } : {});
}
