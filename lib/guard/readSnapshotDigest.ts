import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import type { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { z } from "zod";
import { readLines } from "../sync/jsonLines";
import { HashList, idHash, type SnapshotDigest, userKey } from "./SnapshotDigest";

/** The fields of a snapshot line the guard reads (CONTRACTS.md section 3); the rest is ignored. */
const snapshotLine = z.discriminatedUnion("kind", [
  z.looseObject({ kind: z.literal("sync_start"), syncId: z.string(), connector: z.string() }),
  z.looseObject({
    kind: z.literal("resource"),
    type: z.string(),
    id: z.string(),
    user: z.looseObject({}).optional(),
  }),
  z.looseObject({ kind: z.literal("grant"), id: z.string() }),
  z.looseObject({ kind: z.literal("sync_end"), status: z.literal("complete") }),
  z.looseObject({ kind: z.enum(["resource_type", "entitlement"]) }),
]);

/** A snapshot's digest, or why the file is not a complete snapshot. */
export type DigestResult = { digest: SnapshotDigest } | { notSnapshot: string };

/**
 * Streams a snapshot (one line at a time; memory holds only the hashes) into its digest. Users
 * are the resources with the user trait's fields (`user`), which the connectors set on every
 * principal. A file that is not a complete snapshot (no `sync_start` first, a line that does not
 * parse, no `sync_end` last) says so instead.
 */
export async function digestSnapshotLines(lines: AsyncIterable<string>): Promise<DigestResult> {
  let start: { syncId: string; connector: string } | undefined;
  let ended = false;
  const users = new HashList();
  const grants = new HashList();
  let n = 0;
  for await (const text of lines) {
    n++;
    if (ended) return { notSnapshot: `line ${n} follows sync_end` };
    let parsed: z.output<typeof snapshotLine>;
    try {
      parsed = snapshotLine.parse(JSON.parse(text));
    } catch {
      return { notSnapshot: `line ${n} is not a snapshot record` };
    }
    if (n === 1 && parsed.kind !== "sync_start")
      return { notSnapshot: "it does not start with sync_start" };
    switch (parsed.kind) {
      case "sync_start":
        if (n !== 1) return { notSnapshot: `line ${n} is a second sync_start` };
        start = { syncId: parsed.syncId, connector: parsed.connector };
        break;
      case "resource":
        if (parsed.user) users.push(idHash(userKey(parsed.type, parsed.id)));
        break;
      case "grant":
        grants.push(idHash(parsed.id));
        break;
      case "sync_end":
        ended = true;
        break;
    }
  }
  if (!start) return { notSnapshot: "it is empty" };
  if (!ended) return { notSnapshot: "it has no sync_end (an incomplete snapshot)" };
  return { digest: { ...start, users: users.finish(), grants: grants.finish() } };
}

/** The digest of a snapshot file, plain or gzip (told by its first bytes, not its name). */
export async function digestSnapshotFile(path: string): Promise<DigestResult> {
  return digestSnapshotLines(readLines(await openSnapshot(path)));
}

/** A snapshot file's text as a stream, gunzipped when it is gzip. */
export async function openSnapshot(path: string): Promise<Readable> {
  const handle = await open(path, "r");
  let magic: Buffer;
  try {
    magic = Buffer.alloc(2);
    await handle.read(magic, 0, 2, 0);
  } finally {
    await handle.close();
  }
  const file = createReadStream(path);
  if (magic[0] !== 0x1f || magic[1] !== 0x8b) return file;
  const gunzip = createGunzip();
  file.on("error", (error) => gunzip.destroy(error));
  return file.pipe(gunzip);
}
