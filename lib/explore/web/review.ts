import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { type GrantRow, postJson } from "./api";

const CHOICES = [
  ["keep", "Keep"],
  ["revoke", "Revoke"],
  ["flag", "Flag"],
] as const;

/**
 * Keep, revoke or flag one grant, with a note: each change is sent at once and written beside the
 * snapshot by the server, so a reload (or another browser) sees it. Choosing the current decision
 * again clears it.
 */
export function ReviewControl({ row }: { row: GrantRow }) {
  const [decision, setDecision] = useState<string | null>(row.review?.decision ?? null);
  const [note, setNote] = useState(row.review?.note ?? "");
  const [error, setError] = useState<string | null>(null);
  const save = async (next: string | null, nextNote: string) => {
    try {
      await postJson("/api/review", { grantId: row.grantId, decision: next, note: nextNote });
      setError(null);
    } catch (failure) {
      setError((failure as Error).message);
    }
  };
  const choose = (choice: string) => {
    const next = decision === choice ? null : choice;
    setDecision(next);
    void save(next, note);
  };
  return html`<div class="review" role="group" aria-label=${`Review of ${row.grantId}`}>
    ${CHOICES.map(
      ([value, label]) =>
        html`<button type="button" class=${`choice choice-${value}${decision === value ? " on" : ""}`}
          aria-pressed=${decision === value} data-decision=${value} onClick=${() => choose(value)}>${label}</button>`,
    )}
    <input type="text" class="note" placeholder="Note" aria-label="Note" value=${note} disabled=${decision === null}
      onInput=${(event: Event) => setNote((event.target as HTMLInputElement).value)}
      onChange=${(event: Event) => decision && void save(decision, (event.target as HTMLInputElement).value)} />
    ${error ? html`<span class="error">${error}</span>` : null}
  </div>`;
}
