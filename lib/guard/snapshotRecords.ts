import { z } from "zod";

/**
 * The fields of a snapshot line that the removal guard and `diff` read (CONTRACTS.md section 3);
 * the rest is ignored. One schema for both, so they accept the same files: a field the guard does
 * not need is optional here, but typed when present.
 */
export const snapshotLine = z.discriminatedUnion("kind", [
  z.looseObject({
    kind: z.literal("sync_start"),
    syncId: z.string(),
    connector: z.string(),
    startedAt: z.string().optional(),
  }),
  z.looseObject({
    kind: z.literal("resource"),
    type: z.string(),
    id: z.string(),
    displayName: z.string().optional(),
    status: z.enum(["enabled", "disabled"]).optional(),
    user: z
      .looseObject({ login: z.string().optional(), emails: z.array(z.string()).optional() })
      .optional(),
  }),
  z.looseObject({
    kind: z.literal("entitlement"),
    id: z.string(),
    displayName: z.string().optional(),
  }),
  z.looseObject({ kind: z.literal("grant"), id: z.string(), entitlement: z.string().optional() }),
  z.looseObject({
    kind: z.literal("sync_end"),
    status: z.literal("complete"),
    finishedAt: z.string().optional(),
  }),
  z.looseObject({ kind: z.literal("resource_type") }),
]);

export type SnapshotLine = z.output<typeof snapshotLine>;
export type SyncStartLine = Extract<SnapshotLine, { kind: "sync_start" }>;
export type ResourceLine = Extract<SnapshotLine, { kind: "resource" }>;
export type EntitlementLine = Extract<SnapshotLine, { kind: "entitlement" }>;
export type GrantLine = Extract<SnapshotLine, { kind: "grant" }>;
/** The lines between `sync_start` and `sync_end`. */
export type BodyLine = Exclude<SnapshotLine, { kind: "sync_start" | "sync_end" }>;

/**
 * The key of a resource: its type and id, which together identify it. The guard hashes it (a
 * stored digest depends on it: never change it) and `diff` sorts by it.
 */
export function userKey(type: string, id: string): string {
  return `${type}\u0000${id}`;
}

/** A user: a resource with the user trait's fields (`user`), which the connectors set on every principal. */
export function isUser(line: ResourceLine): boolean {
  return line.user !== undefined;
}

/** The first and last lines of a complete snapshot. */
export interface SnapshotEnds {
  start: SyncStartLine;
  end: Extract<SnapshotLine, { kind: "sync_end" }>;
}

/** A snapshot's ends, or why the file is not a complete snapshot. */
export type SnapshotRead = SnapshotEnds | { notSnapshot: string };

/**
 * Reads a snapshot line by line and hands every line between `sync_start` and `sync_end` to
 * `visit` (awaited only when it returns a promise, so a synchronous visitor costs no tick a line).
 * `start` sees `sync_start` first and may throw to stop early. A file that is not a complete
 * snapshot (no `sync_start` first, a line that does not parse, a line after `sync_end`, no
 * `sync_end` at all) says why instead; what `visit` saw of it must then be thrown away.
 */
export async function readCompleteSnapshot(
  lines: AsyncIterable<string>,
  visit: (line: BodyLine) => void | Promise<void>,
  start?: (line: SyncStartLine) => void,
): Promise<SnapshotRead> {
  let first: SyncStartLine | undefined;
  let end: SnapshotEnds["end"] | undefined;
  let n = 0;
  for await (const text of lines) {
    n++;
    if (end) return { notSnapshot: `line ${n} follows sync_end` };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return { notSnapshot: `line ${n} is not a snapshot record` };
    }
    const checked = snapshotLine.safeParse(json);
    if (!checked.success)
      return { notSnapshot: `line ${n} is not a snapshot record (${firstIssue(checked.error)})` };
    const parsed = checked.data;
    if (n === 1 && parsed.kind !== "sync_start")
      return { notSnapshot: "it does not start with sync_start" };
    switch (parsed.kind) {
      case "sync_start":
        if (n !== 1) return { notSnapshot: `line ${n} is a second sync_start` };
        first = parsed;
        start?.(parsed);
        break;
      case "sync_end":
        end = parsed;
        break;
      default: {
        const pending = visit(parsed);
        if (pending) await pending;
      }
    }
  }
  if (!first) return { notSnapshot: "it is empty" };
  if (!end) return { notSnapshot: "it has no sync_end (an incomplete snapshot)" };
  return { start: first, end };
}

/** The first problem zod found in a line: the field's path and what is wrong with it. */
function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "it does not parse";
  return `${issue.path.length > 0 ? issue.path.join(".") : "kind"}: ${issue.message}`;
}
