import type { Command } from "commander";
import {
  ChunkedOutput,
  type DiffResult,
  diffSnapshots,
  HumanReport,
  jsonChanges,
  jsonEnd,
  RunFiles,
} from "../../diff";
import { ConnectorError, ExitCode, exitCodeOf, messageOf } from "../../errors";
import { judgeRemovals, MAX_REMOVAL_VARIABLE, parseRemovalLimit } from "../../guard";
import { removeTempFilesOnExit } from "../../snapshot";
import type { CliIo } from "../io";

interface DiffCommandOptions {
  json?: boolean;
  verbose?: boolean;
}

/** Adds `diff OLD NEW [--json]` (docs/review-tools.md) to the program. */
export function addDiffCommand(
  program: Command,
  io: CliIo,
  setExitCode: (code: number) => void,
): void {
  program
    .command("diff")
    .description(
      "what changed between two complete snapshots of one connector: exit 0 equal, 1 different, 2 bad input or a failure",
    )
    .argument("<old>", "the earlier snapshot (plain or gzip)")
    .argument("<new>", "the later snapshot of the same connector")
    .option("--json", "one change a JSON line, then a diff_end line with the counts")
    .option("--verbose", "progress on stderr (also on a terminal)")
    .action(async (oldPath: string, newPath: string, options: DiffCommandOptions) => {
      try {
        setExitCode(await diffCommand(io, oldPath, newPath, options));
      } catch (error) {
        throw exitCodeOf(error) === ExitCode.failure ? new DiffFailedError(error) : error;
      }
    });
}

/**
 * diff's exit 1 means "different" (as diff(1)'s does): a failure of its own work (a temporary file
 * it cannot write, a read error) exits 2, as diff(1)'s trouble does, with the failure's message
 * and code.
 */
class DiffFailedError extends ConnectorError {
  override readonly exitCode: ExitCode = ExitCode.usage;
  override readonly code: string;

  constructor(cause: unknown) {
    super(messageOf(cause), { cause });
    this.name = cause instanceof Error ? cause.name : "DiffFailedError";
    this.code = ConnectorError.is(cause) ? cause.code : "diff_failed";
  }
}

/**
 * Compares the two files (lib/diff) and prints the changes: JSON Lines as they are found with
 * --json, else a summary with what the removal guard would decide, then the changes grouped.
 */
export async function diffCommand(
  io: CliIo,
  oldPath: string,
  newPath: string,
  options: DiffCommandOptions,
): Promise<number> {
  removeTempFilesOnExit();
  const out = new ChunkedOutput(io.stdout);
  const progress =
    options.verbose || io.stderr.isTTY
      ? (message: string) => {
          io.stderr.write(`${message}\n`);
        }
      : undefined;
  let result: DiffResult;
  if (options.json) {
    result = await diffSnapshots(oldPath, newPath, jsonChanges(out), { progress });
    await jsonEnd(out, result);
  } else {
    const limit = parseRemovalLimit(io.env[MAX_REMOVAL_VARIABLE], MAX_REMOVAL_VARIABLE);
    const files = new RunFiles();
    const report = new HumanReport(files);
    try {
      result = await diffSnapshots(oldPath, newPath, report.sink, { progress });
      const { users, grants } = result.removal;
      await report.print(out, result, judgeRemovals(users, grants, limit), {
        old: oldPath,
        new: newPath,
      });
    } finally {
      report.close();
      await files.removeAll();
    }
  }
  await out.flush();
  return result.equal ? ExitCode.ok : ExitCode.failure;
}
