import { jsonLine } from "../snapshot/jsonLines";
import type { Change, ChangeSink, DiffResult } from "./compareSnapshots";
import type { ChunkedOutput } from "./output";

/**
 * `diff --json` (docs/review-tools.md): one change a line as it is found,
 * `{"change","kind","id"}` with `"fields"` (before and after) on a changed resource.
 */
export function jsonChanges(out: ChunkedOutput): ChangeSink {
  return (change: Change) => out.write(jsonLine(jsonChange(change)));
}

export function jsonChange(change: Change): Record<string, unknown> {
  if (change.change === "changed") {
    const { kind, id } = change.after;
    return { change: "changed", kind, id, fields: change.fields };
  }
  const { kind, id } = change.record;
  return { change: change.change, kind, id };
}

/** The last line: `{"kind":"diff_end","equal","counts"}`. */
export async function jsonEnd(out: ChunkedOutput, result: DiffResult): Promise<void> {
  await out.write(jsonLine({ kind: "diff_end", equal: result.equal, counts: result.counts }));
}
