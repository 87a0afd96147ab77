// The removal guard's store in S3 (`S3GuardStore`) on moto_server (no stack: a bucket): what a new
// snapshot removes is counted against the published digest as it is read, exactly the counts of
// comparing the two digests whole; a digest written in parts reads back as it was; an object that
// is not a digest is refused by its S3 name.
import { CreateBucketCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { S3GuardStore } from "../../lib/cloud/aws/guardStore";
import { HashList, idHash, judgeRemoval, type SnapshotDigest } from "../../lib/guard";
import { awsClientConfig, awsEnv, type Moto, startMoto } from "../aws/harness";

let moto: Moto;
let s3: S3Client;

beforeAll(async () => {
  moto = await startMoto();
  s3 = new S3Client({ ...awsClientConfig(moto.endpoint), forcePathStyle: true });
  await s3.send(new CreateBucketCommand({ Bucket: "shards" }));
  // The runtime's clients (made at first use, in this file's module context) go to moto.
  Object.assign(process.env, awsEnv(moto.endpoint));
});

afterAll(async () => {
  s3?.destroy();
  await moto?.stop();
});

/** A digest of users `u0..` and grants `g0..` in the given ranges. */
function digestOf(syncId: string, users: [number, number], grants: [number, number]) {
  const list = (prefix: string, [from, to]: [number, number]) => {
    const hashes = new HashList();
    for (let i = from; i < to; i++) hashes.push(idHash(`${prefix}${i}`));
    return hashes.finish();
  };
  return {
    connector: "blackline",
    syncId,
    users: list("user\u0000u", users),
    grants: list("g", grants),
  } satisfies SnapshotDigest;
}

describe("the removal guard's store in S3", () => {
  it("counts removals against the published digest as it is read: the counts of the two digests", async () => {
    const store = new S3GuardStore("shards", "c1");
    const previous = digestOf("s1", [0, 3000], [0, 9000]);
    const next = digestOf("s2", [1000, 3500], [0, 6000]);
    expect(await store.removals(next)).toBeUndefined();

    await store.recordPublished(previous);
    const removals = await store.removals(next);

    const whole = judgeRemoval(previous, next, 10);
    expect(removals).toEqual({ connector: "blackline", users: whole.users, grants: whole.grants });
    expect(removals?.users).toEqual({ previous: 3000, removed: 1000 });
    expect(removals?.grants).toEqual({ previous: 9000, removed: 3000 });
    expect(await store.published()).toEqual(previous);
  });

  it("refuses a published object that is not a digest, naming it in S3", async () => {
    const store = new S3GuardStore("shards", "c2");
    await s3.send(
      new PutObjectCommand({ Bucket: "shards", Key: "guard/c2/published.digest", Body: "{}\n" }),
    );

    await expect(store.removals(digestOf("s3", [0, 10], [0, 10]))).rejects.toThrow(
      "s3://shards/guard/c2/published.digest is not a snapshot digest",
    );
  });
});
