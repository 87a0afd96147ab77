import { type CliRun, cli } from "../../helpers/cli";
import type { Stack } from "./stack";

/**
 * An operator command (`access-connectors cloud ...`) against the deployed stage, run in this
 * process; the Lambda invokes it makes run the packaged handlers.
 */
export function runOperator(
  stack: Stack,
  argv: string[],
  env: Record<string, string> = {},
): Promise<CliRun> {
  return cli(["cloud", ...argv, "--stage", stack.stage], env, {
    invoke: (functionName, event) => stack.invokeByName(functionName, event),
  });
}
