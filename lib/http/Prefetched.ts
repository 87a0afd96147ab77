/**
 * Answers asked for ahead of the job that reads them, in a run (or a cloud delivery) whose jobs
 * share this process: a list's next pages, sent while its current page is read, so a list read
 * page after page is not one round trip a page (`pagesAhead`, `indexPagesAhead`; a membership
 * group's next items too). A key is started once and taken once; the decisions on each page stay
 * with the job that takes it, in the list's order. Each caller takes only keys of its own making,
 * which say what they hold (BlackLine's `recordsKey`, Valimail's `pageKey`: a list's path or name
 * and the page's place in it; a group's item ids).
 */
export class Prefetched {
  readonly #answers = new Map<string, Promise<unknown>>();
  #left: number;

  /** `limit`: the most keys started (what the caller will take: an answer not taken is lost). */
  constructor(limit = Number.POSITIVE_INFINITY) {
    this.#left = limit;
  }

  /** Starts `ask` under `key`, unless an answer is already there or on its way, or none is left. */
  start<Answer>(key: string, ask: () => Promise<Answer>): void {
    if (this.#answers.has(key) || this.#left <= 0) return;
    this.#left--;
    const answer = ask();
    // Whoever takes it sees the failure; an answer nobody takes (a list that failed) is dropped.
    answer.catch(() => {});
    this.#answers.set(key, answer);
  }

  /** Starts nothing more: the caller may not take what it would ask for. */
  close(): void {
    this.#left = 0;
  }

  /** Answers started and not yet taken. */
  get waiting(): number {
    return this.#answers.size;
  }

  /** Once every answer not taken has come (or failed): nothing of the caller's left running. */
  async settled(): Promise<void> {
    await Promise.allSettled(this.#answers.values());
    this.#answers.clear();
  }

  /** The answer started under `key` (by `start` with the same `Answer`), handed over once. */
  take<Answer>(key: string): Promise<Answer> | undefined {
    const answer = this.#answers.get(key);
    this.#answers.delete(key);
    return answer as Promise<Answer> | undefined;
  }
}
