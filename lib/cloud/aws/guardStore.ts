import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { decodeDigest, encodeDigest, type SnapshotDigest } from "../../guard";
import type { GuardStore } from "../../publish";
import { writeFailure } from "../../sync/errors";
import { awsClients } from "./clients";

/**
 * The mass-deletion guard's objects of one instance (its store for lib/publish) in the shards
 * bucket, under
 * `guard/<connectorId>/` (kept: the bucket's lifecycle rule expires `runs/` only): the digest of
 * the last published snapshot (what the next run is compared with, 8 bytes an id), and the
 * snapshot the guard held, as assembled, with its digest (its sync id and counts).
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

  /** After an upload: its digest becomes the comparison; a held snapshot is superseded. */
  async recordPublished(digest: SnapshotDigest): Promise<void> {
    await this.#put("published.digest", encodeDigest(digest));
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
    await this.#put("held.digest", encodeDigest(digest));
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
      const { Body } = await awsClients().s3.send(
        new GetObjectCommand({ Bucket: this.#bucket, Key: this.#heldKey }),
      );
      if (!Body) throw new Error(`s3://${this.#bucket}/${this.#heldKey} has no body`);
      const file = createWriteStream(path);
      let fileError: unknown;
      file.on("error", (error) => {
        fileError = error;
      });
      await pipeline(Body as Readable, file).catch((error: unknown) => {
        // Only the file's own error is a write error; the download's is the download's.
        throw error === fileError
          ? writeFailure(error, {
              what: "the held snapshot's download",
              path,
              elsewhere:
                "give the scheduler function more ephemeral storage for /tmp (ephemeralStorageSize in serverless.yml)",
              outcome: "nothing was uploaded and the snapshot stays held",
            })
          : error;
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

  async #put(name: string, body: Buffer): Promise<void> {
    await awsClients().s3.send(
      new PutObjectCommand({ Bucket: this.#bucket, Key: `${this.#prefix}${name}`, Body: body }),
    );
  }

  async #delete(name: string): Promise<void> {
    await awsClients().s3.send(
      new DeleteObjectCommand({ Bucket: this.#bucket, Key: `${this.#prefix}${name}` }),
    );
  }
}
