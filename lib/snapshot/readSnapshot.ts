import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import type { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import type * as z from "zod";
import { canonicalLine, grantLine } from "./canonicalLine";
import { countsMismatch, syncIdMismatch } from "./errors";
import {
  type BodyLine,
  type RecordKind,
  type SnapshotLine,
  type SyncEndLine,
  type SyncStartLine,
  snapshotLine,
} from "./records";

/** The first and last lines of a complete snapshot, and the records read of each kind. */
export interface SnapshotEnds {
  start: SyncStartLine;
  end: SyncEndLine;
  counts: Record<RecordKind, number>;
}

/**
 * Sees each record: the record as checked, its line's number and, when that line is the record's
 * own JSON (`JSON.parse` gives it back exactly: the writer's lines, taken by the fast paths), the
 * line's text, for a visitor that keeps records as JSON without `JSON.stringify`.
 */
export type Visitor = (line: BodyLine, lineNumber: number, text?: string) => void | Promise<void>;

/** A snapshot's ends, or why the file is not a complete snapshot. */
export type SnapshotRead = SnapshotEnds | { notSnapshot: string };

/**
 * Reads a snapshot line by line, each checked by `snapshotLine`, and hands every line between
 * `sync_start` and `sync_end` to `visit` (awaited only when it returns a promise, so a synchronous
 * visitor costs no tick a line). `start` sees `sync_start` first and may throw to stop early. A
 * file that is not a complete snapshot (no `sync_start` first, a line that is not JSON or not a
 * record, a line after `sync_end`, no `sync_end` at all, a `sync_end` of another sync or whose
 * counts are not the records read) says why instead, naming the line and the field; what `visit`
 * saw of it must then be thrown away. `visit` gets each line's number (from 1) too. `lines` come
 * one at a time or in batches (`lineBatches`, no promise a line). A record twice is not found
 * here (that takes memory or a sort): see `readSnapshotFile.ts`. The one reader of snapshots: the
 * removal guard, `diff`, `export` and `explore` read through it.
 */
export async function readCompleteSnapshot(
  lines: AsyncIterable<string | readonly string[]>,
  visit: Visitor,
  start?: (line: SyncStartLine) => void,
): Promise<SnapshotRead> {
  const read = new LinesRead(visit, start);
  try {
    for await (const batch of lines) {
      if (typeof batch === "string") {
        const pending = read.line(batch);
        if (pending) await pending;
      } else
        for (const text of batch) {
          const pending = read.line(text);
          if (pending) await pending;
        }
    }
  } catch (error) {
    if (error instanceof NotSnapshot) return { notSnapshot: error.message };
    throw error;
  }
  return read.ends();
}

/** Why a file is not a complete snapshot, thrown inside `readCompleteSnapshot` only. */
class NotSnapshot extends Error {}

/** `readCompleteSnapshot`'s state: the lines so far. */
class LinesRead {
  #first: SyncStartLine | undefined;
  #end: SyncEndLine | undefined;
  readonly #counts: Record<RecordKind, number> = {
    resource_type: 0,
    resource: 0,
    entitlement: 0,
    grant: 0,
  };
  #n = 0;

  constructor(
    private readonly visit: Visitor,
    private readonly start?: (line: SyncStartLine) => void,
  ) {}

  /** Checks one line and hands it on; a NotSnapshot when it cannot be the next line of one. */
  line(text: string): void | Promise<void> {
    const n = ++this.#n;
    if (this.#end) throw new NotSnapshot(`line ${n} follows sync_end`);
    const grant = grantLine(text);
    const json = grant ? undefined : parsedJson(text, n);
    const canonical = grant ?? canonicalLine(json);
    const parsed = canonical ?? checkedLine(json, n);
    if (n === 1 && parsed.kind !== "sync_start")
      throw new NotSnapshot("it does not start with sync_start");
    switch (parsed.kind) {
      case "sync_start":
        if (n !== 1) throw new NotSnapshot(`line ${n} is a second sync_start`);
        this.#first = parsed;
        this.start?.(parsed);
        return undefined;
      case "sync_end":
        this.#end = parsed;
        return undefined;
      default:
        this.#counts[parsed.kind]++;
        return this.visit(parsed, n, canonical && text);
    }
  }

  ends(): SnapshotRead {
    const first = this.#first;
    const end = this.#end;
    const counts = this.#counts;
    if (!first) return { notSnapshot: "it is empty" };
    if (!end) return { notSnapshot: "it has no sync_end (an incomplete snapshot)" };
    if (end.syncId !== first.syncId)
      return { notSnapshot: syncIdMismatch(first.syncId, end.syncId) };
    for (const kind of RECORD_KINDS) {
      if (end.counts[kind] !== counts[kind])
        return { notSnapshot: countsMismatch(kind, end.counts[kind], counts[kind]) };
    }
    return { start: first, end, counts };
  }
}

/** Line `n` as JSON, else a NotSnapshot. */
function parsedJson(text: string, n: number): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new NotSnapshot(`line ${n} is not a snapshot record (not JSON)`);
  }
}

/** A line zod accepts, else a NotSnapshot naming the line and its first problem. */
function checkedLine(json: unknown, n: number): SnapshotLine {
  const checked = snapshotLine.safeParse(json);
  if (checked.success) return checked.data;
  throw new NotSnapshot(`line ${n} is not a snapshot record (${firstIssue(json, checked.error)})`);
}

const RECORD_KINDS: readonly RecordKind[] = ["resource_type", "resource", "entitlement", "grant"];

const KINDS: ReadonlySet<unknown> = new Set(snapshotLine.options.map((o) => o.shape.kind.value));

/**
 * The first problem zod found in a line: the record's kind when it has one, the field's path and
 * what is wrong with it, e.g. `a grant's principal: Invalid input: expected object, received
 * undefined`.
 */
function firstIssue(json: unknown, error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "it does not parse";
  if (issue.path.length === 0) return `the record: ${issue.message}`;
  const kind = (json as { kind?: unknown }).kind;
  const field = issue.path.join(".");
  if (field === "kind" || !KINDS.has(kind)) return `${field}: ${issue.message}`;
  return `${kind === "entitlement" ? "an" : "a"} ${kind}'s ${field}: ${issue.message}`;
}

/** A snapshot file's text as a stream, gunzipped when it is gzip (told by its first bytes, not its name). */
export async function openSnapshot(path: string): Promise<Readable> {
  const handle = await open(path, "r");
  let magic: Buffer;
  try {
    magic = Buffer.alloc(2);
    await handle.read(magic, 0, 2, 0);
  } finally {
    await handle.close();
  }
  // Chunks of 1 MiB: fewer of them to split into lines than of the default 64 KiB.
  const file = createReadStream(path, { highWaterMark: 1 << 18 });
  if (magic[0] !== 0x1f || magic[1] !== 0x8b) return file;
  const gunzip = createGunzip();
  file.on("error", (error) => gunzip.destroy(error));
  return file.pipe(gunzip);
}
