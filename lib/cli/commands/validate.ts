import type { Environment } from "../../config";
import { loadSyncConnector } from "../../connectors/registry";
import type { ConnectorName } from "../../connectors/types";
import { newRequestContext } from "../../http";
import type { CliIo } from "../io";

/** Checks the configuration, then the credentials with one token call and one small read. */
export async function validateConnector(
  io: CliIo,
  env: Environment,
  name: ConnectorName,
): Promise<void> {
  const { connector } = loadSyncConnector(name, env);
  io.stdout.write(`${name}: configuration is valid\n`);
  const report = await connector.validate(newRequestContext());
  for (const check of report.checks) io.stdout.write(`${name}: ${check}\n`);
  io.stdout.write(`${name}: ready to sync\n`);
}
