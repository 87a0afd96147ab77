import { readFile } from "node:fs/promises";
import * as z from "zod";
import { messageOf, UsageError } from "../errors";
import { writeWhole } from "../service/writeWhole";
import { DECISIONS, type Decision } from "./apiSchemas";

const decisionRecord = z.strictObject({
  decision: z.enum(DECISIONS),
  note: z.string(),
  decidedAt: z.string(),
});
export type DecisionRecord = z.output<typeof decisionRecord>;

const reviewFile = z.strictObject({
  version: z.literal(1),
  snapshot: z.strictObject({ syncId: z.string(), connector: z.string() }),
  decisions: z.record(z.string(), decisionRecord),
});

/**
 * The review decisions of one snapshot (keep, revoke or flag, with a note, per grant), kept in a
 * file beside it (`<snapshot>.review.json`, readable by its owner only) so they survive a reload
 * and a restart. Each change rewrites the file whole under a temporary name and renames it
 * (`writeWhole`), one write at a time: a crash leaves the previous file, never half of one.
 */
export class ReviewStore {
  private writes: Promise<void> = Promise.resolve();

  private constructor(
    readonly path: string,
    private readonly snapshot: { syncId: string; connector: string },
    readonly decisions: Map<string, DecisionRecord>,
  ) {}

  /** Opens the decisions of this sync, or none; a file of another sync is refused (exit 2). */
  static async open(path: string, snapshot: { syncId: string; connector: string }) {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT")
        return new ReviewStore(path, snapshot, new Map());
      throw new UsageError(`cannot read the review file ${path}: ${messageOf(error)}`);
    }
    let parsed: z.output<typeof reviewFile>;
    try {
      parsed = reviewFile.parse(JSON.parse(text));
    } catch {
      throw new UsageError(
        `${path} is not a review file this tool wrote; move it away to start a new review`,
      );
    }
    if (parsed.snapshot.syncId !== snapshot.syncId)
      throw new UsageError(
        `${path} holds the review of sync ${parsed.snapshot.syncId}, not of this snapshot's sync ${snapshot.syncId}; move it away to start a new review`,
      );
    return new ReviewStore(path, snapshot, new Map(Object.entries(parsed.decisions)));
  }

  /**
   * Records (or with `null`, clears) a grant's decision, and returns once it is on disk. A write
   * that fails takes the decision back, unless a later one replaced it.
   */
  decide(grantId: string, decision: Decision | null, note: string, now = new Date()) {
    const before = this.decisions.get(grantId);
    const made = decision === null ? undefined : { decision, note, decidedAt: now.toISOString() };
    const put = (record: DecisionRecord | undefined) => {
      if (record) this.decisions.set(grantId, record);
      else this.decisions.delete(grantId);
    };
    put(made);
    const text = `${JSON.stringify({
      version: 1,
      snapshot: this.snapshot,
      decisions: Object.fromEntries(this.decisions),
    })}\n`;
    const write = this.writes
      .then(() => this.writeWhole(text))
      .catch((error: unknown) => {
        if (this.decisions.get(grantId) === made) put(before);
        throw error;
      });
    this.writes = write.catch(() => {});
    return write;
  }

  /** Resolves once every decision made so far is written. */
  flushed(): Promise<void> {
    return this.writes;
  }

  counts(): Record<Decision, number> {
    const counts = { keep: 0, revoke: 0, flag: 0 };
    for (const { decision } of this.decisions.values()) counts[decision]++;
    return counts;
  }

  private writeWhole(text: string) {
    return writeWhole(
      {
        what: "the review file",
        path: this.path,
        elsewhere: "copy the snapshot to another filesystem and explore the copy",
        outcome: "this decision was not saved (the earlier ones are)",
      },
      text,
    );
  }
}
