import { mkdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import * as z from "zod";
import { decodeDigest, digestParts, releaseHashes, type SnapshotDigest } from "../guard";
import { countRemovalsFromDigestFile } from "../guard/digestFileRemovals";
import type { PreviousRemovals } from "../guard/readSnapshotDigest";
import { parseJsonOrUndefined } from "../parseJson";
import type { GuardStore } from "../publish";
import { writeFailure } from "../sync/errors";
import { HELD_DIR_NAME, PUBLISHED_DIGEST_NAME, RELEASE_RESULT_NAME } from "./constants";
import { STATE_DIR_ELSEWHERE, writeWhole } from "./writeWhole";

/** What the service answers a release request with (the `release --service` command waits for it). */
export const releaseResult = z.object({
  syncId: z.string().min(1),
  status: z.enum(["uploaded", "failed", "superseded"]),
  detail: z.string(),
  at: z.string(),
});
export type ReleaseResult = z.output<typeof releaseResult>;

const releaseRequest = z.object({ syncId: z.string().min(1), requestedAt: z.string() });

/**
 * The mass-deletion guard's files in the service's state directory (its store for lib/publish):
 * the digest of the last uploaded snapshot (what the next one is compared with), the snapshot
 * the guard held with its digest, a release request (written by `access-connectors release --service`, taken by the
 * running service, so only the service talks to the platform and writes its state), and the
 * answer to the last request. Every file is written to a temporary name and renamed
 * (`writeWhole`); one the system refuses fails with `WriteFailedError` naming it.
 */
export class HeldSnapshot implements GuardStore {
  readonly #stateDir: string;
  readonly #heldDir: string;
  /** The sync whose digest `removals` staged (the file at `#stagedPath`), if any. */
  #staged: string | undefined;

  constructor(stateDir: string) {
    this.#stateDir = stateDir;
    this.#heldDir = join(stateDir, HELD_DIR_NAME);
  }

  /** Where a held snapshot waits for its release (gzip, as uploaded). */
  get snapshotPath(): string {
    return join(this.#heldDir, "snapshot.jsonl.gz");
  }

  /** The digest of the last snapshot uploaded; none before the first. A broken file throws. */
  async published(): Promise<SnapshotDigest | undefined> {
    return this.#readDigest(this.#publishedPath);
  }

  /**
   * What the new snapshot removes from the last one uploaded, counted as that one's digest file
   * is read (never whole in memory); none before the first. A broken file throws. The new digest
   * is then staged beside it (`#staged`), so `letGo` can free its hashes for the upload and
   * `recordPublished` only renames the file.
   */
  async removals(next: SnapshotDigest): Promise<PreviousRemovals | undefined> {
    const removals = await countRemovalsFromDigestFile(this.#publishedPath, next);
    await writeWhole(
      {
        what: "the removal guard's digest of the new snapshot",
        path: this.#stagedPath,
        elsewhere: STATE_DIR_ELSEWHERE,
        outcome: "nothing was uploaded",
      },
      digestParts(next),
    );
    this.#staged = next.syncId;
    return removals;
  }

  /**
   * Frees the hashes of `digest` when they are staged on disk (`removals`), at once
   * (`releaseHashes`): an upload of 1,000,000 users takes minutes, and they are 36 MB. Only
   * `recordPublished` reads it after.
   */
  letGo(digest: SnapshotDigest): void {
    if (this.#staged !== digest.syncId) return;
    releaseHashes(digest.users);
    releaseHashes(digest.grants);
    digest.users = new BigUint64Array(0);
    digest.grants = new BigUint64Array(0);
  }

  /** Removes a staged digest that was not published (a sync that failed or was held). */
  async dropStaged(): Promise<void> {
    this.#staged = undefined;
    await rm(this.#stagedPath, { force: true });
  }

  /** After an upload: its digest is what the next snapshot is compared with; any held one is superseded. */
  async recordPublished(digest: SnapshotDigest): Promise<void> {
    const file = {
      what: "the removal guard's digest of the uploaded snapshot",
      path: this.#publishedPath,
      elsewhere: STATE_DIR_ELSEWHERE,
      outcome:
        "the snapshot was uploaded but the next sync's removals are counted against the snapshot before it",
    };
    if (this.#staged === digest.syncId) {
      this.#staged = undefined;
      await rename(this.#stagedPath, this.#publishedPath).catch((error: unknown) => {
        throw writeFailure(error, file);
      });
    } else await writeWhole(file, digestParts(digest));
    await rm(this.#heldDir, { recursive: true, force: true });
  }

  /** Keeps `snapshotFile` (moved, same file system) as the held snapshot, replacing any held before. */
  async hold(snapshotFile: string, digest: SnapshotDigest): Promise<void> {
    await rm(this.#heldDir, { recursive: true, force: true });
    const file = {
      what: "the snapshot the removal guard held",
      path: this.snapshotPath,
      elsewhere: STATE_DIR_ELSEWHERE,
      outcome:
        "it cannot be released and nothing was uploaded; the next sync is compared with the last upload again",
    };
    try {
      await mkdir(this.#heldDir, { recursive: true });
      await rename(snapshotFile, this.snapshotPath);
    } catch (error) {
      throw writeFailure(error, file);
    }
    await writeWhole(
      { ...file, what: "the digest of the held snapshot", path: this.#heldDigestPath },
      digestParts(digest),
    );
  }

  /** The held snapshot's digest (its sync id, its counts), if one is held. */
  async held(): Promise<SnapshotDigest | undefined> {
    return this.#readDigest(this.#heldDigestPath);
  }

  withHeldSnapshot<T>(use: (snapshotFile: string) => Promise<T>): Promise<T> {
    return use(this.snapshotPath);
  }

  /** Asks the running service to upload the held snapshot `syncId`. */
  async requestRelease(syncId: string): Promise<void> {
    await rm(join(this.#stateDir, RELEASE_RESULT_NAME), { force: true });
    const request = { syncId, requestedAt: new Date().toISOString() };
    await writeWhole(
      {
        what: "the release request",
        path: this.#requestPath,
        elsewhere: STATE_DIR_ELSEWHERE,
        outcome: "the service was not asked to release the snapshot",
      },
      `${JSON.stringify(request)}\n`,
    );
  }

  /** The release asked for, if any; an unreadable request is dropped. */
  async releaseRequested(): Promise<{ syncId: string } | undefined> {
    const text = await readFile(this.#requestPath, "utf8").catch(() => undefined);
    if (text === undefined) return undefined;
    const parsed = releaseRequest.safeParse(parseJsonOrUndefined(text));
    if (parsed.success) return parsed.data;
    await rm(this.#requestPath, { force: true });
    return undefined;
  }

  /** Answers the release request: it is dropped, and the answer written for the command. */
  async answerRelease(result: Omit<ReleaseResult, "at">): Promise<void> {
    const answer: ReleaseResult = { ...result, at: new Date().toISOString() };
    await writeWhole(
      {
        what: "the answer to the release request",
        path: join(this.#stateDir, RELEASE_RESULT_NAME),
        elsewhere: STATE_DIR_ELSEWHERE,
        outcome:
          "`release --service` is not told how its request ended; the label and the service's log say it",
      },
      `${JSON.stringify(answer)}\n`,
    );
    await rm(this.#requestPath, { force: true });
  }

  /** The service's answer to the release of `syncId`, once there is one. */
  async releaseAnswer(syncId: string): Promise<ReleaseResult | undefined> {
    const text = await readFile(join(this.#stateDir, RELEASE_RESULT_NAME), "utf8").catch(
      () => undefined,
    );
    const parsed = releaseResult.safeParse(parseJsonOrUndefined(text));
    return parsed.success && parsed.data.syncId === syncId ? parsed.data : undefined;
  }

  get #publishedPath(): string {
    return join(this.#stateDir, PUBLISHED_DIGEST_NAME);
  }

  get #stagedPath(): string {
    return join(this.#stateDir, `${PUBLISHED_DIGEST_NAME}.next`);
  }

  get #heldDigestPath(): string {
    return join(this.#heldDir, "snapshot.digest");
  }

  get #requestPath(): string {
    return join(this.#heldDir, "release.request");
  }

  async #readDigest(path: string): Promise<SnapshotDigest | undefined> {
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
    return decodeDigest(bytes, path);
  }
}
