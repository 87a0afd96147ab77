import { randomUUID } from "node:crypto";
import type { ActionReply } from "../../actions";
import { runAction } from "../../actions";
import type { Environment } from "../../config";
import { connectorNamed, parseConnectorName } from "../../connectors";
import { ExitCode } from "../../errors";
import { newRequestContext, type UpstreamOptions } from "../../http";
import type { CliIo } from "../io";
import { createCliLogger } from "../logger";

export interface ActionCommand {
  connector: string;
  action: string;
  args: Record<string, string | undefined>;
  requestId?: string;
  verbose?: boolean;
}

/**
 * Runs one write (docs/actions.md) and prints its reply as one JSON line on stdout; a
 * failure is also said on stderr. Returns the exit code the reply calls for.
 */
export async function actionCommand(
  io: CliIo,
  env: Environment,
  command: ActionCommand,
  upstreamOptions: UpstreamOptions = {},
): Promise<number> {
  const connector = parseConnectorName(command.connector);
  const logger = createCliLogger(io, command.verbose ?? false);
  const request = {
    requestId: command.requestId ?? randomUUID(),
    connectorId: connector,
    action: command.action,
    args: Object.fromEntries(
      Object.entries(command.args).filter(([, value]) => value !== undefined),
    ),
  };
  const reply = await runAction(
    request,
    () => connectorNamed(connector).provisioner(env, upstreamOptions),
    newRequestContext({ logger }),
  );
  return printReply(io, reply);
}

/** Prints a reply as one JSON line (a failure also on stderr); returns the exit code it calls for. */
export function printReply(io: CliIo, reply: ActionReply): number {
  io.stdout.write(`${JSON.stringify(reply)}\n`);
  if (reply.status === "failed")
    io.stderr.write(`error: ${reply.error.code}: ${reply.error.message}\n`);
  return exitCodeOfReply(reply);
}

function exitCodeOfReply(reply: ActionReply): number {
  if (reply.status === "succeeded") return ExitCode.ok;
  if (reply.error.code === "auth_failed") return ExitCode.credentialsRejected;
  if (reply.error.code === "invalid_request") return ExitCode.usage;
  return ExitCode.failure;
}
