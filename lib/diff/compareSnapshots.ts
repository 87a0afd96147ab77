import { ConnectorError } from "../errors";
import type { Removal } from "../guard";
import { duplicateRecordError } from "../snapshot/readSnapshotFile";
import { RunFiles } from "../sortedRuns/RunFiles";
import { compareKeys, MergedRuns, RepeatedKey } from "../sortedRuns/runs";
import { DiffWorkError, SnapshotInputError } from "./errors";
import {
  type FieldChanges,
  fieldChanges,
  KEYED_RECORD_CODEC,
  type KeyedRecord,
} from "./keyedRecord";
import { type SortedSnapshot, sortSnapshot } from "./sortSnapshot";

/** One difference between the two snapshots, in key order (resources, entitlements, grants). */
export type Change =
  | { change: "added" | "removed"; record: KeyedRecord }
  | { change: "changed"; before: KeyedRecord; after: KeyedRecord; fields: FieldChanges };

/** Where the changes go, one at a time (awaited when it returns a promise). */
export type ChangeSink = (change: Change) => void | Promise<void>;

export interface DiffCounts {
  resource: { added: number; removed: number; changed: number };
  entitlement: { added: number; removed: number };
  grant: { added: number; removed: number };
  /** Resources with the user trait, in the words of an admin: `changed` is a change of name, login or emails. */
  accounts: { added: number; removed: number; enabled: number; disabled: number; changed: number };
}

export interface DiffResult {
  old: SortedSnapshot;
  new: SortedSnapshot;
  equal: boolean;
  counts: DiffCounts;
  /** Of the old snapshot's users and grants, how many the new one no longer has: what the removal guard counts. */
  removal: { users: Removal; grants: Removal };
  /** Accounts and grants in the new snapshot. */
  next: { users: number; grants: number };
  /** Resources that are not accounts (teams, roles, member types). */
  others: { added: number; removed: number; changed: number };
}

export interface DiffOptions {
  /** Where temporary files go (default: the system's temporary directory). */
  tempDir?: string;
  /** A line of progress for long work. */
  progress?: (message: string) => void;
  runRecords?: number;
  fanIn?: number;
}

/**
 * Compares two complete snapshots of one connector without holding either in memory: each is
 * sorted by key into runs on disk, then the two sorted streams are joined in one pass (a key on
 * one side only is added or removed, on both sides a resource may be changed). Temporary files
 * are removed at the end, whatever the outcome.
 */
export async function diffSnapshots(
  oldPath: string,
  newPath: string,
  sink: ChangeSink,
  options: DiffOptions = {},
): Promise<DiffResult> {
  const files = new RunFiles(options.tempDir);
  try {
    const sortOptions = { runRecords: options.runRecords, fanIn: options.fanIn };
    const started = performance.now();
    const old = await sortSnapshot(oldPath, files, { ...sortOptions, tag: "old" });
    options.progress?.(sorted("OLD", old, started));
    const sortedAt = performance.now();
    const next = await sortSnapshot(newPath, files, {
      ...sortOptions,
      tag: "new",
      onStart: (start) => {
        if (start.connector !== old.start.connector) {
          throw new SnapshotInputError(
            `${newPath} is a snapshot of ${start.connector} and ${oldPath} one of ${old.start.connector}: diff compares two syncs of one connector`,
          );
        }
      },
    });
    options.progress?.(sorted("NEW", next, sortedAt));
    const joined = await joinSorted(old, next, sink);
    options.progress?.("diff: compared");
    return { old, new: next, ...joined };
  } catch (error) {
    // Equal neighbours in one file's sorted runs: a record it holds twice (lib/snapshot's words).
    if (error instanceof RepeatedKey) {
      const { file, record } = error as RepeatedKey<KeyedRecord>;
      throw await duplicateRecordError(file, record.kind, record.id);
    }
    throw ConnectorError.is(error) ? error : new DiffWorkError(error);
  } finally {
    await files.removeAll();
  }
}

function sorted(label: string, snapshot: SortedSnapshot, since: number): string {
  const seconds = ((performance.now() - since) / 1000).toFixed(1);
  return `diff: read ${label} (${snapshot.path}): ${snapshot.records.toLocaleString("en-US")} records, ${snapshot.runs.length} sorted runs, ${seconds} s`;
}

function emptyCounts(): DiffCounts {
  return {
    resource: { added: 0, removed: 0, changed: 0 },
    entitlement: { added: 0, removed: 0 },
    grant: { added: 0, removed: 0 },
    accounts: { added: 0, removed: 0, enabled: 0, disabled: 0, changed: 0 },
  };
}

/** The merge-join of two sorted snapshots: one pass over each, in key order. */
async function joinSorted(
  old: SortedSnapshot,
  next: SortedSnapshot,
  sink: ChangeSink,
): Promise<Omit<DiffResult, "old" | "new">> {
  const counts = emptyCounts();
  const users = { previous: 0, removed: 0 };
  const grants = { previous: 0, removed: 0 };
  const now = { users: 0, grants: 0 };
  const others = { added: 0, removed: 0, changed: 0 };
  const emit = (change: Change) => sink(change);
  const left = await MergedRuns.open(old.runs, old.path, KEYED_RECORD_CODEC);
  const right = await MergedRuns.open(next.runs, next.path, KEYED_RECORD_CODEC).catch(
    async (error: unknown) => {
      await left.close();
      throw error;
    },
  );
  try {
    for (;;) {
      const a = left.head;
      const b = right.head;
      if (!a && !b) break;
      const order = !a ? 1 : !b ? -1 : compareKeys(a.key, b.key);
      const before = order <= 0 ? a : undefined;
      const after = order >= 0 ? b : undefined;
      if (before?.account) users.previous++;
      if (before?.kind === "grant") grants.previous++;
      if (after?.account) now.users++;
      if (after?.kind === "grant") now.grants++;
      if (before?.account && !after?.account) users.removed++;
      if (before && !after) {
        if (before.kind === "grant") grants.removed++;
        count(counts, others, before, "removed");
        await emit({ change: "removed", record: before });
      } else if (after && !before) {
        count(counts, others, after, "added");
        await emit({ change: "added", record: after });
      } else if (before && after && before.kind === "resource") {
        const fields = fieldChanges(before.fields, after.fields);
        if (fields) {
          countChanged(counts, others, after, fields);
          await emit({ change: "changed", before, after, fields });
        }
      }
      const movedLeft = before ? left.next() : undefined;
      if (movedLeft) await movedLeft;
      const movedRight = after ? right.next() : undefined;
      if (movedRight) await movedRight;
    }
  } finally {
    await Promise.all([left.close(), right.close()]);
  }
  const equal =
    Object.values(counts.resource).every((n) => n === 0) &&
    Object.values(counts.entitlement).every((n) => n === 0) &&
    Object.values(counts.grant).every((n) => n === 0);
  return { equal, counts, removal: { users, grants }, next: now, others };
}

type Others = DiffResult["others"];

function count(
  counts: DiffCounts,
  others: Others,
  record: KeyedRecord,
  change: "added" | "removed",
): void {
  counts[record.kind][change]++;
  if (record.account) counts.accounts[change]++;
  else if (record.kind === "resource") others[change]++;
}

function countChanged(
  counts: DiffCounts,
  others: Others,
  record: KeyedRecord,
  fields: FieldChanges,
): void {
  counts.resource.changed++;
  if (!record.account) {
    others.changed++;
    return;
  }
  const { status, ...rest } = fields;
  const toggled = status !== undefined && isToggle(status);
  if (toggled) counts.accounts[status.after === "disabled" ? "disabled" : "enabled"]++;
  if (Object.keys(rest).length > 0 || (status && !toggled)) counts.accounts.changed++;
}

/** A status that went from enabled to disabled or back. */
export function isToggle(status: { before: unknown; after: unknown }): boolean {
  const pair = `${status.before}>${status.after}`;
  return pair === "enabled>disabled" || pair === "disabled>enabled";
}
