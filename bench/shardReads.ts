/**
 * Finalize's snapshot writer (`writeRunSnapshot`) in this process over shards served by HTTP on
 * 127.0.0.1 with a 40 ms first byte (the harness's counting proxy in front of a static server), once
 * with the reads one after another (each opened when the previous one ended: how finalize read
 * before) and once as finalize reads now. Where moto (one request at a time) is not in the GET
 * path, so the two differ by the waiting alone. Part of `-- --cloud-finalize`.
 */
import { createServer, get } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import { SHARD_READS_IN_FLIGHT, writeRunSnapshot } from "../lib/cloud/runSnapshot";
import { startAwsRequestCounter } from "../test/aws/harness";
import { S3_FIRST_BYTE_MS } from "./cloudFinalize";

export interface ShardReadsMeasure {
  shards: number;
  usersPerShard: number;
  reads: "one after another" | `${number} in flight`;
  wallMs: number;
  cpuMs: number;
}

export async function measureShardReads(
  work: string,
  shards = 400,
  usersPerShard = 50,
): Promise<ShardReadsMeasure[]> {
  const body = (key: string) =>
    Array.from(
      { length: usersPerShard },
      (_, n) =>
        `${JSON.stringify({ kind: "resource", type: "user", id: `${key}-${n}`, displayName: `User ${n} of ${key}` })}\n`,
    ).join("");
  const server = createServer((request, answer) => answer.end(body(request.url ?? "/")));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const proxy = await startAwsRequestCounter(`http://127.0.0.1:${port}`, {
    getDelayMs: S3_FIRST_BYTE_MS,
  });
  const open = (key: string) =>
    new Promise<Readable>((resolve, reject) =>
      get(`${proxy.endpoint}/${key}`, resolve).on("error", reject),
    );
  let previous: Promise<unknown> = Promise.resolve();
  const oneAfterAnother = (key: string) => {
    const opened = previous.then(() => open(key));
    previous = opened.then((stream) => finished(stream)).catch(() => {});
    return opened;
  };
  const shardKeys = Array.from({ length: shards }, (_, n) => `shard-${n}`);
  const measures: ShardReadsMeasure[] = [];
  try {
    for (const [reads, openShard] of [
      ["one after another", oneAfterAnother],
      [`${SHARD_READS_IN_FLIGHT} in flight`, open],
    ] as const) {
      const began = performance.now();
      const cpu = process.cpuUsage();
      await writeRunSnapshot(
        join(work, "shard-reads.jsonl.gz"),
        { syncId: "bench", connector: "blackline", startedAt: new Date().toISOString() },
        {
          resourceTypes: [
            { kind: "resource_type", id: "user", displayName: "User", traits: ["user"] },
          ],
          shardKeys,
          openShard,
        },
      );
      const { user, system } = process.cpuUsage(cpu);
      const measure: ShardReadsMeasure = {
        shards,
        usersPerShard,
        reads,
        wallMs: Math.round(performance.now() - began),
        cpuMs: Math.round((user + system) / 1000),
      };
      process.stdout.write(`${JSON.stringify({ shardReads: measure })}\n`);
      measures.push(measure);
    }
  } finally {
    await proxy.close();
    server.close();
  }
  return measures;
}
