import type { Command } from "commander";
import type { FunctionInvoker } from "../../cloud/aws/invoker";
import type { CliIo } from "../io";

/** `cloud runs <connectorId> [--limit N] [--json]`, added to the `cloud` command of main.ts. */
export function addCloudRunsCommand(
  cloud: Command,
  staged: (command: Command) => Command,
  io: CliIo,
  services: { invoke?: FunctionInvoker },
): void {
  staged(
    cloud
      .command("runs")
      .description("an instance's last runs, newest first: times, status, counts, reason")
      .argument("<connectorId>")
      .option("--limit <n>", "how many runs (1 to 100)", "10")
      .option("--json", "one JSON object a line"),
  ).action(
    async (
      connectorId: string,
      options: { stage: string; region?: string; limit: string; json?: boolean },
    ) => {
      const { listRuns } = await import("./cloud");
      await listRuns(io, connectorId, { ...options, ...services });
    },
  );
}
