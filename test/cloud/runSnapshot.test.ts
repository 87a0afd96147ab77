/**
 * Finalize's read of a run's shards (`writeRunSnapshot`): a window of reads in flight, the
 * snapshot written in the order of the shard keys whatever order the reads answer in, byte for
 * byte the snapshot the records' path writes (lines taken as they are where they are in the
 * writer's form, parsed where not), and a write refused by the filesystem named. The shards come
 * from an in-memory store here (S3's part runs on moto in the AWS tier); the reads answer when the
 * test says, never on a timer.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pathToFileURL } from "node:url";
import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  SHARD_BYTES_AHEAD,
  SHARD_READS_IN_FLIGHT,
  writeRunSnapshot,
} from "../../lib/cloud/runSnapshot";
import { shardWorkerCount } from "../../lib/cloud/shardWorkers";
import {
  jsonLine,
  type ResourceTypeRecord,
  SnapshotAssembler,
  SnapshotFile,
  type SnapshotRecord,
} from "../../lib/snapshot";
import { bundleScript } from "../helpers/bundleScript";
import { runUnderFileSizeLimit } from "../helpers/fileSizeLimit";
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

/** Each case runs with the shards made ready on the main thread, and in 2 shard workers. */
const SHARD_THREADS: [string, number][] = [
  ["on the main thread", 0],
  ["in shard workers", 2],
];

describe("finalize's shard reads", () => {
  it.each(SHARD_THREADS)(
    "keeps a window of reads in flight and writes the shards in key order, whatever order they answer in, %s",
    async (_, count) => {
      const dir = await makeTempDir();
      const path = join(dir, "s1.jsonl.gz");
      const store = heldShards();
      const workers = await shardWorkers(count);

      const written = writeRunSnapshot(
        path,
        run,
        { resourceTypes: [userType], shardKeys: keys, openShard: (key) => store.openShard(key) },
        workers,
      );
      await answerUntil(store, written);

      const snapshot = await written;
      expect(snapshot.counts.resource).toBe(200);
      expect(store.mostWaiting).toBe(SHARD_READS_IN_FLIGHT);
      const ids = (await readSnapshot(path)).filter((l) => l.kind === "resource").map((l) => l.id);
      expect(ids).toEqual(keys.flatMap((key) => [`${key}-1`, `${key}-2`]));
    },
  );

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

  it.each(SHARD_THREADS)(
    "fails with the read's error when a shard cannot be read, and leaves no file, %s",
    async (_, count) => {
      const dir = await makeTempDir();
      const store = heldShards(keys[40]);
      const workers = await shardWorkers(count);

      const written = writeRunSnapshot(
        join(dir, "s1.jsonl.gz"),
        run,
        { resourceTypes: [userType], shardKeys: keys, openShard: (key) => store.openShard(key) },
        workers,
      );
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
    },
  );
});

/**
 * Shards as a run's workers write them (`jsonLine`), with what the fast reads must pass to the
 * parser: names with quotes, backslashes and controls, a profile with a number, an array-index key
 * or a repeated key, a line spelled otherwise (keys in another order, spaces); and what the
 * integrity check must judge: resources, entitlements and grants repeated across shards, grants
 * naming an entitlement or a principal no shard has.
 */
function mixedShards(): string[][] {
  const shards: string[][] = [];
  for (let s = 0; s < 6; s++) {
    const records: SnapshotRecord[] = [];
    for (let u = 0; u < 40; u++) {
      const n = s * 30 + u; // 10 users of each shard are the next one's too
      records.push({
        kind: "resource",
        type: "user",
        id: `u${n}`,
        displayName: n % 7 === 0 ? `Ann "${n}" O\\Neil\t` : `Ann ${n} Müller`,
        status: n % 2 === 0 ? "enabled" : "disabled",
        user: { login: `ann${n}@example.com`, emails: n % 5 === 0 ? [] : [`ann${n}@example.com`] },
        ...(n % 3 === 0 ? { profile: { title: "Analyst", zone: "Europe/Zurich" } } : {}),
        ...(n % 11 === 0 ? { profile: { title: "Analyst", level: 3 } } : {}),
        ...(n % 13 === 0 ? { profile: { "7": "seven", title: "x" } } : {}),
      });
    }
    records.push({
      kind: "entitlement",
      id: `team:${s % 4}:member`,
      resource: { type: "team", id: `${s % 4}` },
      slug: "member",
      displayName: "Member",
      purpose: "assignment",
      grantableTo: ["user"],
    });
    records.push({ kind: "resource", type: "team", id: `${s % 4}`, displayName: `Team ${s % 4}` });
    for (let u = 0; u < 40; u++) {
      const n = s * 30 + u;
      const principal = { type: "user", id: u === 39 ? `gone${n}` : `u${n}` };
      const entitlement = u === 38 ? "team:99:member" : `team:${s % 4}:member`;
      records.push({
        kind: "grant",
        id: `${entitlement}:user:${principal.id}`,
        entitlement,
        principal,
      });
    }
    records.push({
      kind: "grant",
      id: 'team:0:member:user:"quoted"',
      entitlement: "team:0:member",
      principal: { type: "user", id: "u0" },
    });
    const lines = records.map((record) => jsonLine(record).slice(0, -1));
    lines.push(
      `{"kind":"grant","entitlement":"team:${s % 4}:member","id":"g-other-${s}","principal":{"type":"user","id":"u${s * 30}"}}`,
      `{ "kind": "resource", "type": "user", "id": "u${s * 30 + 1}", "displayName": "spaced" }`,
      `{"kind":"resource","type":"user","id":"dup${s}","displayName":"d","profile":{"a":"1","a":"2"}}`,
    );
    shards.push(lines);
  }
  return shards;
}

describe("finalize's snapshot, byte for byte", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each(SHARD_THREADS)(
    "is the snapshot the records' path writes: the same bytes, counts and digest, %s",
    async (_, count) => {
      vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-11-29T12:00:00.000Z") });
      const dir = await makeTempDir();
      const workers = await shardWorkers(count);
      const shards = mixedShards();
      const shardKeys = shards.map((_, i) => `shard-${i}`);
      const ofKey = (key: string) => shards[shardKeys.indexOf(key)] as string[];
      const types: ResourceTypeRecord[] = [
        userType,
        { kind: "resource_type", id: "team", displayName: "Team", traits: ["group"] },
      ];

      const fast = await writeRunSnapshot(
        join(dir, "fast.jsonl.gz"),
        run,
        {
          resourceTypes: types,
          shardKeys,
          // Lines cut across chunks, as an S3 body comes.
          openShard: async (key) => {
            const text = `${ofKey(key).join("\n")}\n`;
            return Readable.from([text.slice(0, 1000), text.slice(1000, 1003), text.slice(1003)]);
          },
        },
        workers,
      );

      // The records' path: each line parsed and written as a record (what finalize did before).
      const file = await SnapshotFile.open(join(dir, "records.jsonl.gz"), run.syncId, "elsewhere");
      const assembler = await SnapshotAssembler.open({
        out: file.stream,
        outFile: file.file,
        outReleasesChunks: true,
        spoolDir: dir,
        syncId: run.syncId,
        connector: run.connector,
        startedAt: new Date(run.startedAt),
      });
      await assembler.write(types);
      for (const key of shardKeys) {
        await assembler.write(ofKey(key).map((line) => JSON.parse(line) as SnapshotRecord));
      }
      const slow = await assembler.complete();
      await file.commit();

      const fastBytes = gunzipSync(await readFile(join(dir, "fast.jsonl.gz")));
      const slowBytes = gunzipSync(await readFile(join(dir, "records.jsonl.gz")));
      expect(fastBytes.toString("utf8")).toBe(slowBytes.toString("utf8"));
      expect(fast.counts).toEqual(slow.counts);
      expect(fast.skipped).toEqual(slow.skipped);
      expect(fast.digest).toEqual(assembler.digest);
      // What the check judged: repeats written once, dangling grants left out and counted.
      expect(fast.skipped.dangling_grant).toBe(12);
      expect(fast.counts.resource).toBe(6 * 30 + 10 + 4 + 6);
      const written = (await readSnapshot(join(dir, "fast.jsonl.gz")))
        .filter((l) => l.id !== undefined)
        .map((l) => `${l.kind} ${l.type ?? ""} ${l.id}`);
      expect(new Set(written).size).toBe(written.length);
    },
  );

  it("fails with a worker's error in its class when a line is no JSON, and leaves no file", async () => {
    const dir = await makeTempDir();
    const shards = mixedShards();
    shards[2] = [...(shards[2] as string[]), '{"kind":"resource",'];
    const written = writeRunSnapshot(
      join(dir, "s1.jsonl.gz"),
      run,
      {
        resourceTypes: [userType],
        shardKeys: shards.map((_, i) => String(i)),
        openShard: async (key) => Readable.from([`${shards[Number(key)]?.join("\n")}\n`]),
      },
      await shardWorkers(2),
    );

    await expect(written).rejects.toThrow(SyntaxError);
    await expect(written).rejects.toThrow(/JSON/);
    expect(await readdir(dir)).toEqual([]);
  });
});

describe("finalize's shard workers", () => {
  it("are one a vCPU but the main thread's, none on one vCPU or without their script", async () => {
    const { script } = (await shardWorkers(1)) as { script: URL };
    expect(shardWorkerCount(script, 4)).toBe(3);
    expect(shardWorkerCount(script, 2)).toBe(1);
    expect(shardWorkerCount(script, 1)).toBe(0);
    expect(shardWorkerCount(new URL("./no-such-worker.mjs", script), 4)).toBe(0);
  });
});

/**
 * `count` shard workers (none: the main thread), running lib/cloud/shardWorker.ts bundled as
 * scripts/package-functions.mjs bundles it for finalize.
 */
async function shardWorkers(count: number): Promise<{ count: number; script?: URL }> {
  if (count === 0) return { count };
  const script = join(await makeTempDir(), "shard-worker.mjs");
  bundleScript('import "./lib/cloud/shardWorker";', script);
  return { count, script: pathToFileURL(script) };
}

describe("finalize's temporary files past a file size limit (EFBIG)", () => {
  it("fails naming the grant spool and how to give finalize more /tmp, and leaves no file", async () => {
    // writeRunSnapshot bundled into a script writing grants with random ids (which the spool's
    // compression cannot shrink much) under a file size limit of 64 KiB (ulimit -f counts 512 B).
    const dir = await makeTempDir();
    const script = join(dir, "finalize.mjs");
    bundleScript(
      `
        import { randomBytes } from "node:crypto";
        import { Readable } from "node:stream";
        import { writeRunSnapshot } from "./lib/cloud/runSnapshot";
        const grant = () => JSON.stringify({ kind: "grant", id: randomBytes(24).toString("hex"), entitlement: "e", principal: { type: "user", id: randomBytes(8).toString("hex") } });
        const keys = Array.from({ length: 20 }, (_, i) => String(i));
        try {
          await writeRunSnapshot(${JSON.stringify(join(dir, "s.jsonl.gz"))}, { syncId: "t", connector: "test", startedAt: new Date(0).toISOString() }, {
            resourceTypes: [],
            shardKeys: keys,
            openShard: async () => Readable.from([Array.from({ length: 500 }, grant).join("\\n") + "\\n"]),
          });
          console.log("no error");
        } catch (error) {
          console.log(error.code, error.message);
        }
      `,
      script,
    );

    const stdout = await runUnderFileSizeLimit(script, 128);

    expect(stdout).toMatch(
      new RegExp(
        `^write_failed cannot write the grant spool ${join(dir, ".grants.t.")}\\d+\\.spool\\.deflate: the file reached .* \\(EFBIG\\).*ephemeralStorageSize`,
      ),
    );
    expect((await readdir(dir)).sort()).toEqual(["finalize.mjs"]);
  }, 90_000);
});
