import { Argument, Command, CommanderError, Option } from "commander";
import packageJson from "../../package.json" with { type: "json" };
import { loadEnvironment } from "../config";
import { parseConnectorName } from "../connectors/registry";
import { ExitCode, exitCodeOf } from "../errors";
import { redact } from "../redact";
import { actionCommand } from "./commands/action";
import { DEMO_OUTPUT_DIR, runDemo } from "./commands/demo";
import { syncToFile } from "./commands/sync";
import { validateConnector } from "./commands/validate";
import { type CliIo, processIo } from "./io";

interface CommonOptions {
  envFile?: string;
  verbose?: boolean;
}

/** Commands that decide their own exit code report it here. */
type SetExitCode = (code: number) => void;

function buildProgram(io: CliIo, setExitCode: SetExitCode): Command {
  const program = new Command("access-connectors")
    .description("Sync and provision BlackLine and Valimail for an identity-governance platform.")
    .version(packageJson.version)
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

  const writeOptions = (command: Command) =>
    withCommon(command).option("--request-id <id>", "the request's id (default: a fresh one)");
  const runWrite = async (
    connector: string,
    action: string,
    args: Record<string, string | undefined>,
    options: CommonOptions & { requestId?: string },
  ) => {
    setExitCode(await actionCommand(io, envFor(options), { connector, action, args, ...options }));
  };

  writeOptions(
    program
      .command("action")
      .description("run a connector action")
      .argument("<connector>", "blackline or valimail")
      .addArgument(new Argument("<action>", "the action").choices(["enable_user", "disable_user"]))
      .requiredOption("--user-id <id>", "the user's id in the upstream"),
  ).action(
    async (connector: string, action: string, options: CommonOptions & { userId: string }) => {
      await runWrite(connector, action, { user_id: options.userId }, options);
    },
  );

  writeOptions(
    program
      .command("create-account")
      .description("provision an account")
      .argument("<connector>", "blackline or valimail")
      .requiredOption("--email <email>", "the account's email, its userName")
      .requiredOption("--given-name <name>", "given name")
      .requiredOption("--family-name <name>", "family name")
      .option("--member-type <type>", "owner, member or marketer (default: member)"),
  ).action(
    async (
      connector: string,
      options: CommonOptions & {
        email: string;
        givenName: string;
        familyName: string;
        memberType?: string;
      },
    ) => {
      const args = {
        email: options.email,
        given_name: options.givenName,
        family_name: options.familyName,
        member_type: options.memberType,
      };
      await runWrite(connector, "create_account", args, options);
    },
  );

  for (const [name, description] of [
    [
      "grant",
      "give a user an entitlement (for Valimail, a member type; it replaces the current one)",
    ],
    ["revoke", "take an entitlement away (for Valimail, owner or marketer fall back to member)"],
  ] as const) {
    writeOptions(
      program
        .command(name)
        .description(description)
        .argument("<connector>", "blackline or valimail")
        .requiredOption("--user-id <id>", "the user's id in the upstream")
        .requiredOption(
          "--entitlement <id>",
          "the snapshot's entitlement id, e.g. member_type:owner:assigned",
        ),
    ).action(
      async (
        connector: string,
        options: CommonOptions & { userId: string; entitlement: string },
      ) => {
        await runWrite(
          connector,
          name,
          { user_id: options.userId, entitlement_id: options.entitlement },
          options,
        );
      },
    );
  }

  program
    .command("demo")
    .description("run the syncs and one action against the bundled simulators, with no credentials")
    .option("--out-dir <dir>", "where the demo snapshots go", DEMO_OUTPUT_DIR)
    .option("--json", "print the summaries as JSON")
    .action(async (options: { outDir: string; json?: boolean }) => {
      setExitCode(await runDemo(io, options));
    });

  return program;
}

/** Runs the command line and returns the exit code (CONTRACTS.md section 1). */
export async function runCli(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  let exitCode: number = ExitCode.ok;
  const program = buildProgram(io, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync([...argv], { from: "user" });
    return exitCode;
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
