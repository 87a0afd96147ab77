/**
 * Whether a cloud run uploaded exactly what a command-line sync of the same tenant writes: the
 * records between sync_start and sync_end compared as multisets, by count and by a sum of their
 * hashes (each record parsed and written again, so key order does not matter), in flat memory
 * however large the tenant. The command line's sync runs against a new simulator of the same
 * spec, which generates the same tenant (its seed is fixed).
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { type BenchPaths, runCliSync } from "./cliSync";
import type { SimulatorSpec } from "./scenarios";

interface Digest {
  records: number;
  sum: bigint;
}

const MASK = (1n << 128n) - 1n;

function add(digest: Digest, line: string) {
  if (line.length === 0) return;
  const record = JSON.parse(line) as { kind?: string };
  if (record.kind === "sync_start" || record.kind === "sync_end") return;
  const hash = createHash("sha256").update(JSON.stringify(record)).digest();
  digest.records++;
  digest.sum = (digest.sum + BigInt(`0x${hash.subarray(0, 16).toString("hex")}`)) & MASK;
}

export async function sameRecords(
  paths: BenchPaths,
  spec: SimulatorSpec,
  uploaded: string,
  tag: string,
): Promise<boolean> {
  const cloud: Digest = { records: 0, sum: 0n };
  for (const line of uploaded.split("\n")) add(cloud, line);
  const run = await runCliSync(
    { name: tag, quick: false, runtime: "cli", simulator: spec, tenantText: "", upstreamText: "" },
    paths,
    { concurrencyOne: false, tag: `${tag}-cli` },
  );
  const file = join(paths.work, `${tag}-cli.jsonl`);
  try {
    if (!run.ok) throw new Error(`the command line's sync failed: ${run.error}`);
    const local: Digest = { records: 0, sum: 0n };
    for await (const line of createInterface({ input: createReadStream(file) })) add(local, line);
    return local.records === cloud.records && local.sum === cloud.sum;
  } finally {
    await rm(file, { force: true });
  }
}
