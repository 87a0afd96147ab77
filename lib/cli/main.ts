import { Argument, Command, CommanderError, Option } from "commander";
import packageJson from "../../package.json" with { type: "json" };
import type { FunctionInvoker } from "../cloud/aws/invoker";
import { loadEnvironment } from "../config";
import { CONNECTOR_CHOICES, parseConnectorName } from "../connectors";
import { ExitCode, exitCodeOf, messageOf } from "../errors";
import { actionCommand } from "./commands/action";
import { addCloudRunsCommand } from "./commands/cloudRuns";
import { DEMO_OUTPUT_DIR, runDemo } from "./commands/demo";
import { addDiffCommand } from "./commands/diff";
import { addExploreCommand } from "./commands/explore";
import { addExportCommand } from "./commands/export";
import { releaseHeld } from "./commands/release";
import { addStatusCommand } from "./commands/status";
import { syncToFile } from "./commands/sync";
import { validateConnector } from "./commands/validate";
import { type CliIo, processIo } from "./io";

/** What the cloud commands call; tests pass an invoker that runs the packaged handlers. */
export interface CliServices {
  invoke?: FunctionInvoker;
}

interface CommonOptions {
  envFile?: string;
  verbose?: boolean;
}

/** Commands that decide their own exit code report it here. */
type SetExitCode = (code: number) => void;

function buildProgram(io: CliIo, setExitCode: SetExitCode, services: CliServices): Command {
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
      .argument("<connector>", CONNECTOR_CHOICES)
      .option(
        "--out <file>",
        "snapshot file; a name ending in .gz is compressed (default: <connector>.sync.jsonl)",
      )
      .option("--json", "print the summary as one JSON object")
      .option(
        "--max-removal-percent <percent>",
        "hold the snapshot when it removes more than this share of the previous one's users or grants, or off (default: CONNECTOR_MAX_REMOVAL_PERCENT, else 30)",
      ),
  ).action(
    async (
      connector: string,
      options: CommonOptions & { out?: string; json?: boolean; maxRemovalPercent?: string },
    ) => {
      await syncToFile(io, envFor(options), {
        ...options,
        connector: parseConnectorName(connector),
      });
    },
  );

  withCommon(
    program
      .command("release")
      .description("publish a snapshot the removal guard held, as it is, without syncing again")
      .argument("[connector]", `${CONNECTOR_CHOICES}: the held sync's connector`)
      .option("--out <file>", "the held sync's --out (default: <connector>.sync.jsonl)")
      .option(
        "--service",
        "the self-hosted service's held snapshot (in CONNECTOR_STATE_DIR): the running service uploads it",
      ),
  ).action(
    async (
      connector: string | undefined,
      options: CommonOptions & { out?: string; service?: boolean },
    ) => {
      setExitCode(await releaseHeld(io, envFor(options), { ...options, connector }));
    },
  );

  withCommon(
    program
      .command("validate")
      .description("check the configuration and the credentials (one token call, one small read)")
      .argument("<connector>", CONNECTOR_CHOICES),
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
      .argument("<connector>", CONNECTOR_CHOICES)
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
      .argument("<connector>", CONNECTOR_CHOICES)
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
        .argument("<connector>", CONNECTOR_CHOICES)
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

  withCommon(
    program
      .command("service")
      .description(
        "self-hosted service mode: sync on an interval, run the platform's tasks, until SIGTERM",
      )
      .argument("[connector]", `${CONNECTOR_CHOICES} (default: CONNECTOR_NAME)`),
  ).action(async (connector: string | undefined, options: CommonOptions) => {
    // Loaded on use: the service's monitoring (prom-client) is no other command's start-up cost.
    const { serviceCommand } = await import("./commands/service");
    setExitCode(await serviceCommand(io, { ...options, connector }));
  });

  addStatusCommand(program, io);
  addCloudCommands(program, withCommon, envFor, io, setExitCode, services);
  addDiffCommand(program, io, setExitCode);
  addExportCommand(program, io);
  addExploreCommand(program, io, setExitCode);

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

interface StageOptions {
  stage: string;
  region?: string;
}

/** `cloud put-instance | list | remove | sync | release | action` (docs/cloud.md). */
function addCloudCommands(
  program: Command,
  withCommon: (command: Command) => Command,
  envFor: (options: CommonOptions) => ReturnType<typeof loadEnvironment>,
  io: CliIo,
  setExitCode: SetExitCode,
  services: CliServices,
) {
  const cloud = program
    .command("cloud")
    .description("operate the cloud-hosted runtime of a deployed stage (see docs/cloud.md)");
  const staged = (command: Command) =>
    command
      .option("--stage <stage>", "the deployed stage", "dev")
      .option("--region <region>", "its AWS region (default: the SDK's configuration)");
  const commands = () => import("./commands/cloud");
  const cloudOptions = (options: StageOptions) => ({ ...options, ...services });

  withCommon(
    staged(
      cloud
        .command("put-instance")
        .description("register or update an instance: its settings secret and registry row")
        .argument("<connectorId>", "the instance's id, e.g. blackline-prod")
        .argument("<connector>", CONNECTOR_CHOICES)
        .option("--interval <interval>", "how often it syncs: 90s, 30m, 1h, 24h", "1h")
        .option("--no-sync", "do not start the first sync"),
    ),
  ).action(
    async (
      connectorId: string,
      connector: string,
      options: CommonOptions & StageOptions & { interval: string; sync: boolean },
    ) => {
      const { putInstance } = await commands();
      const args = { connectorId, connector, interval: options.interval, sync: options.sync };
      await putInstance(io, envFor(options), args, cloudOptions(options));
    },
  );
  staged(cloud.command("list").description("the stage's instances and their labels"))
    .option("--json", "one JSON object a line")
    .action(async (options: StageOptions & { json?: boolean }) => {
      await (await commands()).listInstances(io, { ...cloudOptions(options), json: options.json });
    });
  addCloudRunsCommand(cloud, staged, io, services);
  staged(
    cloud
      .command("remove")
      .description("remove an instance: its registry row and its secret")
      .argument("<connectorId>")
      .option("--force", "remove it even while a run is in flight (the run then ends error)"),
  ).action(async (connectorId: string, options: StageOptions & { force?: boolean }) => {
    await (await commands()).removeInstance(io, connectorId, cloudOptions(options));
  });
  staged(
    cloud.command("sync").description("start a sync of an instance now").argument("<connectorId>"),
  ).action(async (connectorId: string, options: StageOptions) => {
    await (await commands()).syncInstance(io, connectorId, cloudOptions(options));
  });
  staged(
    cloud
      .command("release")
      .description(
        "publish the snapshot the removal guard held for an instance, as it is, without syncing again",
      )
      .argument("<connectorId>"),
  ).action(async (connectorId: string, options: StageOptions) => {
    setExitCode(await (await commands()).releaseInstance(io, connectorId, cloudOptions(options)));
  });
  staged(
    cloud
      .command("action")
      .description("run a connector action through the action function")
      .argument("<connectorId>")
      .addArgument(
        new Argument("<action>").choices([
          "enable_user",
          "disable_user",
          "create_account",
          "grant",
          "revoke",
        ]),
      )
      .option("--user-id <id>", "the user's id in the upstream")
      .option("--entitlement <id>", "for grant and revoke: the entitlement id")
      .option("--email <email>", "for create_account")
      .option("--given-name <name>", "for create_account")
      .option("--family-name <name>", "for create_account")
      .option("--member-type <type>", "for create_account")
      .option("--request-id <id>", "the request's id (default: a fresh one)"),
  ).action(
    async (
      connectorId: string,
      action: string,
      options: StageOptions & {
        userId?: string;
        entitlement?: string;
        email?: string;
        givenName?: string;
        familyName?: string;
        memberType?: string;
        requestId?: string;
      },
    ) => {
      const args = {
        user_id: options.userId,
        entitlement_id: options.entitlement,
        email: options.email,
        given_name: options.givenName,
        family_name: options.familyName,
        member_type: options.memberType,
      };
      const request = { connectorId, action, args, requestId: options.requestId };
      setExitCode(await (await commands()).cloudAction(io, request, cloudOptions(options)));
    },
  );
}

/** Runs the command line and returns the exit code (docs/command-line.md). */
export async function runCli(
  argv: readonly string[],
  io: CliIo = processIo(),
  services: CliServices = {},
): Promise<number> {
  let exitCode: number = ExitCode.ok;
  const program = buildProgram(
    io,
    (code) => {
      exitCode = code;
    },
    services,
  );
  try {
    await program.parseAsync([...argv], { from: "user" });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are successes; every other parser complaint is bad usage.
      return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    }
    io.stderr.write(`error: ${messageOf(error)}\n`);
    return exitCodeOf(error);
  }
}
