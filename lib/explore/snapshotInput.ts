import { z } from "zod";
import { UsageError } from "../errors";
import { openSnapshot } from "../guard/readSnapshotDigest";
import { readLines } from "../sync/jsonLines";

/** A snapshot's lines as the review page reads them (CONTRACTS.md section 3). */
const ref = z.object({ type: z.string(), id: z.string() });
const scalar = z.union([z.string(), z.number(), z.boolean()]);

export const exploreLine = z.discriminatedUnion("kind", [
  z.looseObject({
    kind: z.literal("sync_start"),
    syncId: z.string(),
    connector: z.string(),
    startedAt: z.string(),
  }),
  z.looseObject({
    kind: z.literal("resource_type"),
    id: z.string(),
    displayName: z.string(),
    traits: z.array(z.string()),
  }),
  z.looseObject({
    kind: z.literal("resource"),
    type: z.string(),
    id: z.string(),
    displayName: z.string(),
    status: z.enum(["enabled", "disabled"]).optional(),
    user: z
      .looseObject({
        login: z.string(),
        emails: z.array(z.string()),
        givenName: z.string().optional(),
        familyName: z.string().optional(),
      })
      .optional(),
    profile: z.record(z.string(), scalar).optional(),
  }),
  z.looseObject({
    kind: z.literal("entitlement"),
    id: z.string(),
    resource: ref,
    slug: z.string(),
    displayName: z.string(),
  }),
  z.looseObject({
    kind: z.literal("grant"),
    id: z.string(),
    entitlement: z.string(),
    principal: ref,
  }),
  z.looseObject({
    kind: z.literal("sync_end"),
    status: z.literal("complete"),
    finishedAt: z.string(),
  }),
]);

export type ExploreLine = z.output<typeof exploreLine>;
export type StartLine = Extract<ExploreLine, { kind: "sync_start" }>;
export type EndLine = Extract<ExploreLine, { kind: "sync_end" }>;
export type ResourceTypeLine = Extract<ExploreLine, { kind: "resource_type" }>;
export type ResourceLine = Extract<ExploreLine, { kind: "resource" }>;
export type EntitlementLine = Extract<ExploreLine, { kind: "entitlement" }>;
export type GrantLine = Extract<ExploreLine, { kind: "grant" }>;
export type BodyLine = ResourceTypeLine | ResourceLine | EntitlementLine | GrantLine;

/** A field's path and zod's message, for the first problem of a line. */
function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "it does not parse";
  const path = issue.path.length ? issue.path.join(".") : "the record";
  return `${path}: ${issue.message}`;
}

/**
 * Reads a complete snapshot (plain or gzip) and hands each line between `sync_start` and
 * `sync_end` to `visit`. A file that is not a complete snapshot is a UsageError naming the file,
 * the line and the field at fault (exit 2): the page never shows part of a sync as the whole.
 */
export async function readSnapshotForExplore(
  path: string,
  visit: (line: BodyLine) => void,
): Promise<{ start: StartLine; end: EndLine }> {
  const bad = (why: string) =>
    new UsageError(`${path} is not a complete snapshot: ${why} (give a file a sync wrote)`);
  let input: Awaited<ReturnType<typeof openSnapshot>>;
  try {
    input = await openSnapshot(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read ${path}: ${code ?? String(error)}; check the path`);
  }
  let start: StartLine | undefined;
  let end: EndLine | undefined;
  let n = 0;
  for await (const text of readLines(input)) {
    n++;
    if (end) throw bad(`line ${n} follows sync_end`);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw bad(`line ${n} is not JSON`);
    }
    const parsed = exploreLine.safeParse(json);
    if (!parsed.success) throw bad(`line ${n}: ${firstIssue(parsed.error)}`);
    const line = parsed.data;
    if (n === 1 && line.kind !== "sync_start") throw bad("it does not start with sync_start");
    if (line.kind === "sync_start") {
      if (n !== 1) throw bad(`line ${n} is a second sync_start`);
      start = line;
    } else if (line.kind === "sync_end") end = line;
    else visit(line);
  }
  if (!start) throw bad("it is empty");
  if (!end) throw bad("it has no sync_end (an incomplete snapshot)");
  return { start, end };
}
