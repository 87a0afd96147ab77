/**
 * Finalize's read of a run's shards (`writeRunSnapshot`): a window of reads in flight, the
 * snapshot written in the order of the shard keys whatever order the reads answer in. The shards
 * come from an in-memory store here (S3's part runs on moto in the AWS tier); the reads answer
 * when the test says, never on a timer.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import {
  SHARD_BYTES_AHEAD,
  SHARD_READS_IN_FLIGHT,
  writeRunSnapshot,
} from "../../lib/cloud/runSnapshot";
import type { ResourceTypeRecord } from "../../lib/snapshot";
import { readSnapshot } from "../helpers/snapshot";
import { makeTempDir } from "../helpers/tempDir";

const run = { syncId: "s1", connector: "blackline", startedAt: "2026-11-29T00:00:00.000Z" };
const userType: ResourceTypeRecord = {
  kind: "resource_type",
  id: "user",
  displayName: "User",
  traits: ["user"],
};
const keys = Array.from({ length: 100 }, (_, i) => `shard-${String(i).padStart(3, "0")}`);
const shardLines = (key: string, displayName = key) =>
  [1, 2].map(
    (n) =>
      `${JSON.stringify({ kind: "resource", type: "user", id: `${key}-${n}`, displayName })}\n`,
  );

/**
 * A shard store whose reads wait until `answerNewestFirst` answers them: every read asked for so
 * far, the newest first (so the reads answer in the reverse of the snapshot's order). Each shard
 * is two users; `shardBytes` pads their names so that a shard is about that large.
 */
function heldShards(failing?: string, shardBytes = 0) {
  const name = (key: string) => key.padEnd(shardBytes / 2, "x");
  const waiting: { key: string; answer: () => void }[] = [];
  let mostWaiting = 0;
  let opened = 0;
  return {
    openShard(key: string): Promise<Readable> {
      opened++;
      return new Promise((resolve, reject) => {
        waiting.push({
          key,
          answer: () =>
            key === failing
              ? reject(new Error(`s3://shards/${key}: read failed`))
              : resolve(Readable.from(shardLines(key, name(key)))),
        });
        mostWaiting = Math.max(mostWaiting, waiting.length);
      });
    },
    answerNewestFirst() {
      for (const read of waiting.splice(0).reverse()) read.answer();
    },
    get mostWaiting() {
      return mostWaiting;
    },
    get opened() {
      return opened;
    },
  };
}

/** Answers the store's reads until `done` settles. */
async function answerUntil(store: ReturnType<typeof heldShards>, done: Promise<unknown>) {
  let settled = false;
  done.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  while (!settled) {
    store.answerNewestFirst();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe("finalize's shard reads", () => {
  it("keeps a window of reads in flight and writes the shards in key order, whatever order they answer in", async () => {
    const dir = await makeTempDir();
    const path = join(dir, "s1.jsonl.gz");
    const store = heldShards();

    const written = writeRunSnapshot(path, run, {
      resourceTypes: [userType],
      shardKeys: keys,
      openShard: (key) => store.openShard(key),
    });
    await answerUntil(store, written);

    const snapshot = await written;
    expect(snapshot.counts.resource).toBe(200);
    expect(store.mostWaiting).toBe(SHARD_READS_IN_FLIGHT);
    const ids = (await readSnapshot(path)).filter((l) => l.kind === "resource").map((l) => l.id);
    expect(ids).toEqual(keys.flatMap((key) => [`${key}-1`, `${key}-2`]));
  });

  it("reads fewer shards ahead when they are large: about SHARD_BYTES_AHEAD of them", async () => {
    const dir = await makeTempDir();
    const store = heldShards(undefined, SHARD_BYTES_AHEAD / 4);

    const written = writeRunSnapshot(join(dir, "s1.jsonl.gz"), run, {
      resourceTypes: [userType],
      shardKeys: keys.slice(0, 4),
      openShard: (key) => store.openShard(key),
    });
    await answerUntil(store, written);

    expect((await written).counts.resource).toBe(8);
    // Four fit (a shard is a little over a quarter): three ahead, the floor of the window is 2.
    expect(store.mostWaiting).toBeGreaterThanOrEqual(2);
    expect(store.mostWaiting).toBeLessThanOrEqual(3);
  });

  it("fails with the read's error when a shard cannot be read, and leaves no file", async () => {
    const dir = await makeTempDir();
    const store = heldShards(keys[40]);

    const written = writeRunSnapshot(join(dir, "s1.jsonl.gz"), run, {
      resourceTypes: [userType],
      shardKeys: keys,
      openShard: (key) => store.openShard(key),
    });
    await answerUntil(store, written);

    await expect(written).rejects.toThrow("s3://shards/shard-040: read failed");
    expect(await readdir(dir)).toEqual([]);
    // The reads still in flight end, and start no other.
    const opened = store.opened;
    for (let round = 0; round < 3; round++) {
      store.answerNewestFirst();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(store.opened).toBe(opened);
    expect(opened).toBeLessThan(keys.length);
  });
});
