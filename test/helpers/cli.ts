import type { CliIo } from "../../lib/cli/io";
import { type CliServices, runCli } from "../../lib/cli/main";

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the command line in this process with its own environment and captured output. */
export async function cli(
  argv: string[],
  env: Record<string, string | undefined>,
  services: CliServices = {},
): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text), isTTY: false },
    env,
  };
  const code = await runCli(argv, io, services);
  return { code, stdout, stderr };
}
