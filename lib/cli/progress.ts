import type { SyncProgress } from "../sync";
import type { CliIo } from "./io";

export interface ProgressReporter {
  update(progress: SyncProgress): void;
  stop(): void;
}

/** Plain lines are printed at most this often when stderr is not a terminal. */
const PLAIN_LINE_INTERVAL_MS = 2_000;

/**
 * Progress on stderr: a live bar on a terminal, a plain line every few seconds otherwise. The bar's
 * library is loaded only for a terminal.
 */
export async function createProgressReporter(io: CliIo, label: string): Promise<ProgressReporter> {
  if (io.stderr.isTTY) {
    const { SingleBar } = await import("cli-progress");
    const bar = new SingleBar({
      stream: io.stderr as NodeJS.WriteStream,
      format: `${label} [{bar}] {value}/{total} jobs | {records} records | {requests} requests`,
      hideCursor: true,
      clearOnComplete: true,
    });
    bar.start(1, 0, { records: 0, requests: 0 });
    return {
      update: (p) => {
        bar.setTotal(p.jobsDone + p.jobsPending);
        bar.update(p.jobsDone, { records: p.records, requests: p.requests });
      },
      stop: () => bar.stop(),
    };
  }
  let lastLineAt = 0;
  return {
    update: (p) => {
      const now = Date.now();
      if (now - lastLineAt < PLAIN_LINE_INTERVAL_MS) return;
      lastLineAt = now;
      io.stderr.write(
        `${label}: ${p.jobsDone} jobs done, ${p.jobsPending} pending, ${p.records} records, ${p.requests} requests\n`,
      );
    },
    stop: () => {},
  };
}
