import { z } from "zod";
import { describeIssues, UsageError } from "../errors";
import { openSnapshot } from "../guard/readSnapshotDigest";
import { type BodyLine, readCompleteSnapshot, type SnapshotEnds } from "../guard/snapshotRecords";
import { readLines } from "../sync/jsonLines";
import type { RecordKind, SnapshotRecord } from "../sync/records";

/**
 * The records of a snapshot with every field an export writes (CONTRACTS.md section 3). The guard's
 * reader frames the file (sync_start first, sync_end last, one JSON record a line); this schema
 * checks the fields of each record the export needs on top of the fields the guard reads.
 */
const ref = z.object({ type: z.string(), id: z.string() });
const exportRecord = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("resource_type"),
    id: z.string(),
    displayName: z.string(),
    traits: z.array(z.enum(["user", "group", "role"])),
  }),
  z.object({
    kind: z.literal("resource"),
    type: z.string(),
    id: z.string(),
    displayName: z.string(),
    status: z.enum(["enabled", "disabled"]).optional(),
    user: z
      .object({
        login: z.string(),
        emails: z.array(z.string()),
        givenName: z.string().optional(),
        familyName: z.string().optional(),
      })
      .optional(),
    profile: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  }),
  z.object({
    kind: z.literal("entitlement"),
    id: z.string(),
    resource: ref,
    slug: z.string(),
    displayName: z.string(),
    purpose: z.enum(["assignment", "permission"]),
    grantableTo: z.array(z.string()),
  }),
  z.object({ kind: z.literal("grant"), id: z.string(), entitlement: z.string(), principal: ref }),
]);

const endCounts = z.object({
  counts: z.record(z.string(), z.number()).optional(),
});

/** The file given to `export` is not a complete snapshot: names the file and what is wrong (exit 2). */
export class NotASnapshotError extends UsageError {
  override name = "NotASnapshotError";
  override readonly code: string = "not_a_snapshot";

  constructor(path: string, reason: string) {
    super(`${path} is not a complete snapshot: ${reason}; nothing was exported`);
  }
}

/** The ends of a snapshot that was read whole, with how many records of each kind it held. */
export interface SnapshotRead extends SnapshotEnds {
  counts: Record<RecordKind, number>;
}

/**
 * Streams the snapshot at `path` (plain or gzip) and hands each record between its ends to `visit`
 * (awaited only when it returns a promise). `start` sees `sync_start` before any record. Throws
 * `NotASnapshotError` when the file is missing, not a snapshot, incomplete, a record lacks a field
 * the export writes, or the records counted differ from what its `sync_end` says it holds; what
 * `visit` was given must then be thrown away.
 */
export async function readSnapshotForExport(
  path: string,
  visit: (record: SnapshotRecord) => void | Promise<void>,
  start?: Parameters<typeof readCompleteSnapshot>[2],
): Promise<SnapshotRead> {
  let input: Awaited<ReturnType<typeof openSnapshot>>;
  try {
    input = await openSnapshot(path);
  } catch (error) {
    const errno = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new NotASnapshotError(path, `it cannot be read (${errno})`);
  }
  const counts: Record<RecordKind, number> = {
    resource_type: 0,
    resource: 0,
    entitlement: 0,
    grant: 0,
  };
  let line = 1;
  const parseRecord = (body: BodyLine) => {
    line++;
    const parsed = exportRecord.safeParse(body);
    if (!parsed.success) {
      const what = describeIssues(parsed.error.issues, "record", 1);
      throw new NotASnapshotError(path, `record ${line} (a ${body.kind}) is incomplete: ${what}`);
    }
    counts[parsed.data.kind]++;
    return visit(parsed.data);
  };
  let read: Awaited<ReturnType<typeof readCompleteSnapshot>>;
  try {
    read = await readCompleteSnapshot(readLines(input), parseRecord, start);
  } catch (error) {
    if (error instanceof NotASnapshotError) throw error;
    const errno = (error as NodeJS.ErrnoException).code;
    if (errno === "Z_DATA_ERROR" || errno === "Z_BUF_ERROR")
      throw new NotASnapshotError(path, `its gzip data is damaged or cut short (${errno})`);
    throw error;
  } finally {
    input.destroy();
  }
  if ("notSnapshot" in read) throw new NotASnapshotError(path, read.notSnapshot);
  const declared = endCounts.safeParse(read.end).data?.counts;
  if (declared) {
    for (const kind of Object.keys(counts) as RecordKind[]) {
      if (declared[kind] !== undefined && declared[kind] !== counts[kind])
        throw new NotASnapshotError(
          path,
          `its sync_end counts ${declared[kind]} ${kind} records but it holds ${counts[kind]}`,
        );
    }
  }
  return { ...read, counts };
}
