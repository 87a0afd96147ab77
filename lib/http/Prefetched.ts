/**
 * Answers asked for ahead of the job that reads them, in a run whose jobs share this process: a
 * list's next pages, sent while its current page is read, so a list read page after page is not
 * one round trip a page (`pagesAhead`). A key is started once and taken once; the decisions on
 * each page stay with the job that takes it, in the list's order.
 */
export class Prefetched<Answer> {
  readonly #answers = new Map<string, Promise<Answer>>();

  /** Starts `ask` under `key`, unless an answer is already there or on its way. */
  start(key: string, ask: () => Promise<Answer>): void {
    if (this.#answers.has(key)) return;
    const answer = ask();
    // Whoever takes it sees the failure; an answer nobody takes (a list that failed) is dropped.
    answer.catch(() => {});
    this.#answers.set(key, answer);
  }

  /** The answer started under `key`, handed over once; `undefined` when none was. */
  take(key: string): Promise<Answer> | undefined {
    const answer = this.#answers.get(key);
    this.#answers.delete(key);
    return answer;
  }

  /** Answers started and not yet taken. */
  get size(): number {
    return this.#answers.size;
  }
}
