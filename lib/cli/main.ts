import { Command, CommanderError, Option } from "commander";
import { loadEnvironment } from "../config";
import { parseConnectorName } from "../connectors/registry";
import { ExitCode, exitCodeOf } from "../errors";
import { redact } from "../http";
import { runDemo } from "./commands/demo";
import { syncToFile } from "./commands/sync";
import { validateConnector } from "./commands/validate";
import { type CliIo, processIo } from "./io";

interface CommonOptions {
  envFile?: string;
  verbose?: boolean;
}

const VERSION = "0.1.0";

function buildProgram(io: CliIo): Command {
  const program = new Command("access-connectors")
    .description("Sync and provision BlackLine and Valimail for an identity-governance platform.")
    .version(VERSION)
    .exitOverride()
    .showHelpAfterError()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    });

  const withCommon = (command: Command) =>
    command
      .addOption(
        new Option("--env-file <file>", "read variables from this file (the environment wins)"),
      )
      .option("--verbose", "log retries and waits on stderr");
  const envFor = (options: CommonOptions) =>
    loadEnvironment({ envFile: options.envFile, env: io.env });

  withCommon(
    program
      .command("sync")
      .description("run one full sync and write a snapshot")
      .argument("<connector>", "blackline or valimail")
      .option(
        "--out <file>",
        "snapshot file; a name ending in .gz is compressed (default: <connector>.sync.jsonl)",
      )
      .option("--json", "print the summary as one JSON object"),
  ).action(async (connector: string, options: CommonOptions & { out?: string; json?: boolean }) => {
    await syncToFile(io, envFor(options), { ...options, connector: parseConnectorName(connector) });
  });

  withCommon(
    program
      .command("validate")
      .description("check the configuration and the credentials (one token call, one small read)")
      .argument("<connector>", "blackline or valimail"),
  ).action(async (connector: string, options: CommonOptions) => {
    await validateConnector(io, envFor(options), parseConnectorName(connector));
  });

  program
    .command("demo")
    .description("run a sync against the bundled simulators, with no credentials")
    .option("--out-dir <dir>", "where the demo snapshots go", "demo-output")
    .option("--json", "print the summaries as JSON")
    .action(async (options: { outDir: string; json?: boolean }) => {
      await runDemo(io, options);
    });

  return program;
}

/** Runs the command line and returns the exit code (CONTRACTS.md section 1). */
export async function runCli(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return ExitCode.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are successes; every other parser complaint is bad usage.
      return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr.write(`error: ${redact(message)}\n`);
    return exitCodeOf(error);
  }
}
