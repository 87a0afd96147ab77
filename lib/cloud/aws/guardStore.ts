import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { decodeDigest, digestParts, type PreviousRemovals, type SnapshotDigest } from "../../guard";
import { countRemovalsFromDigestFile } from "../../guard/digestFileRemovals";
import type { GuardStore } from "../../publish";
import { writeFailure } from "../../sync/errors";
import { awsClients } from "./clients";

const FINALIZE_ELSEWHERE =
  "give the finalize function more ephemeral storage for /tmp (ephemeralStorageSize in serverless.yml)";

/**
 * The mass-deletion guard's objects of one instance (its store for lib/publish) in the shards
 * bucket, under
 * `guard/<connectorId>/` (kept: the bucket's lifecycle rule expires `runs/` only): the digest of
 * the last published snapshot (what the next run is compared with, 8 bytes an id), and the
 * snapshot the guard held, as assembled, with its digest (its sync id and counts). A digest is
 * never copied whole in memory: it is written from the hash arrays themselves (`digestParts`), and
 * the last published one is counted against as it is read from a file (`removals`), as the
 * service's store does; at 10,000,000 users and 35,000,000 grants each copy was 360 MB.
 */
export class S3GuardStore implements GuardStore {
  readonly #bucket: string;
  readonly #prefix: string;

  constructor(bucket: string, connectorId: string) {
    this.#bucket = bucket;
    this.#prefix = `guard/${connectorId}/`;
  }

  get #heldKey(): string {
    return `${this.#prefix}held.jsonl.gz`;
  }

  /** The last published snapshot's digest; none before the first. */
  async published(): Promise<SnapshotDigest | undefined> {
    return this.#digest("published.digest");
  }

  /**
   * What the new snapshot removes from the last published one, counted as that one's digest is
   * read (`countRemovalsFromDigestFile`: a bit a hash of the new digest, never the old one whole);
   * none before the first. Downloaded to a temporary file for the count (8 bytes an id; the grant
   * spool, many times larger, is gone by then).
   */
  async removals(next: SnapshotDigest): Promise<PreviousRemovals | undefined> {
    const dir = await mkdtemp(join(tmpdir(), "guard-"));
    try {
      const path = join(dir, "published.digest");
      const key = `${this.#prefix}published.digest`;
      const downloaded = await this.#download(key, path, {
        what: "the last published snapshot's digest",
        elsewhere: FINALIZE_ELSEWHERE,
        outcome: "nothing was uploaded",
      }).then(
        () => true,
        (error: unknown) => {
          if ((error as { name?: string }).name === "NoSuchKey") return false;
          throw error;
        },
      );
      if (!downloaded) return undefined;
      return await countRemovalsFromDigestFile(path, next, `s3://${this.#bucket}/${key}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** After an upload: its digest becomes the comparison; a held snapshot is superseded. */
  async recordPublished(digest: SnapshotDigest): Promise<void> {
    await this.#put("published.digest", digestParts(digest));
    await this.#delete("held.digest");
    await this.#delete("held.jsonl.gz");
  }

  /** Keeps a held snapshot (the gzip file as assembled) and its digest, replacing any held before. */
  async hold(snapshotFile: string, digest: SnapshotDigest): Promise<void> {
    const { size } = await stat(snapshotFile);
    await awsClients().s3.send(
      new PutObjectCommand({
        Bucket: this.#bucket,
        Key: this.#heldKey,
        Body: createReadStream(snapshotFile),
        ContentLength: size,
        ContentType: "application/gzip",
      }),
    );
    // The digest last: a held snapshot counts only once both are there.
    await this.#put("held.digest", digestParts(digest));
  }

  /** The held snapshot's digest, if one is held. */
  async held(): Promise<SnapshotDigest | undefined> {
    return this.#digest("held.digest");
  }

  /**
   * Downloads the held snapshot into a temporary directory for the time of `use`. A file the
   * system refuses (a full /tmp) fails with `WriteFailedError` naming it; the snapshot stays held.
   */
  async withHeldSnapshot<T>(use: (snapshotFile: string) => Promise<T>): Promise<T> {
    const dir = await mkdtemp(join(tmpdir(), "release-"));
    try {
      const path = join(dir, "held.jsonl.gz");
      await this.#download(this.#heldKey, path, {
        what: "the held snapshot's download",
        elsewhere:
          "give the scheduler function more ephemeral storage for /tmp (ephemeralStorageSize in serverless.yml)",
        outcome: "nothing was uploaded and the snapshot stays held",
      });
      return await use(path);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  async #digest(name: string): Promise<SnapshotDigest | undefined> {
    const key = `${this.#prefix}${name}`;
    try {
      const { Body } = await awsClients().s3.send(
        new GetObjectCommand({ Bucket: this.#bucket, Key: key }),
      );
      if (!Body) return undefined;
      return decodeDigest(
        Buffer.from(await Body.transformToByteArray()),
        `s3://${this.#bucket}/${key}`,
      );
    } catch (error) {
      if ((error as { name?: string }).name === "NoSuchKey") return undefined;
      throw error;
    }
  }

  /** Puts the parts one after another, as one object: no copy of them joined. */
  async #put(name: string, parts: readonly Buffer[]): Promise<void> {
    await awsClients().s3.send(
      new PutObjectCommand({
        Bucket: this.#bucket,
        Key: `${this.#prefix}${name}`,
        Body: Readable.from(parts, { objectMode: false }),
        ContentLength: parts.reduce((bytes, part) => bytes + part.length, 0),
      }),
    );
  }

  /**
   * Downloads the object `key` to the file at `path`. Only the file's own error is a write error
   * (`WriteFailedError`, as `file` tells it); the download's is the download's.
   */
  async #download(
    key: string,
    path: string,
    file: { what: string; elsewhere: string; outcome: string },
  ): Promise<void> {
    const { Body } = await awsClients().s3.send(
      new GetObjectCommand({ Bucket: this.#bucket, Key: key }),
    );
    if (!Body) throw new Error(`s3://${this.#bucket}/${key} has no body`);
    const out = createWriteStream(path);
    let fileError: unknown;
    out.on("error", (error) => {
      fileError = error;
    });
    await pipeline(Body as Readable, out).catch((error: unknown) => {
      throw error === fileError ? writeFailure(error, { ...file, path }) : error;
    });
  }

  async #delete(name: string): Promise<void> {
    await awsClients().s3.send(
      new DeleteObjectCommand({ Bucket: this.#bucket, Key: `${this.#prefix}${name}` }),
    );
  }
}
