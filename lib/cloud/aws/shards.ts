import type { Readable } from "node:stream";
import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { jsonLine, type SnapshotRecord } from "../../snapshot";
import { awsClients } from "./clients";

/**
 * A run's objects in the shards bucket, under `runs/<syncId>/` (expired by the bucket's lifecycle
 * rule): each job's records as one JSON Lines shard. Keys carry the delivery's message id, so two
 * deliveries of one job never overwrite each other; the job's marker names the one committed.
 */
export function shardKeyOf(syncId: string, jobIdValue: string, deliveryId: string): string {
  return `runs/${syncId}/shards/${jobIdValue}/${deliveryId}.jsonl`;
}

export class ShardStore {
  readonly #bucket: string;

  constructor(bucket: string) {
    this.#bucket = bucket;
  }

  async putShard(key: string, records: readonly SnapshotRecord[]): Promise<void> {
    await this.#put(key, records.map(jsonLine).join(""), "application/x-ndjson");
  }

  /** A shard as a stream, so finalize never holds a run's records in memory. */
  async openShard(key: string): Promise<Readable> {
    return (await this.#get(key)) as unknown as Readable;
  }

  async #put(key: string, body: string, contentType: string): Promise<void> {
    await awsClients().s3.send(
      new PutObjectCommand({
        Bucket: this.#bucket,
        Key: key,
        Body: body,
        ContentType: contentType,
      }),
    );
  }

  async #get(key: string) {
    const { Body } = await awsClients().s3.send(
      new GetObjectCommand({ Bucket: this.#bucket, Key: key }),
    );
    if (!Body) throw new Error(`s3://${this.#bucket}/${key} has no body`);
    return Body;
  }
}
