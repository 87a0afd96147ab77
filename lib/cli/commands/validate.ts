import type { Environment } from "../../config";
import { type ConnectorName, connectorNamed } from "../../connectors";
import { newRequestContext } from "../../http";
import type { CliIo } from "../io";

/** Checks the configuration, then the credentials with one token call and one small read. */
export async function validateConnector(
  io: CliIo,
  env: Environment,
  name: ConnectorName,
): Promise<void> {
  const { connector } = connectorNamed(name).sync(env);
  io.stdout.write(`${name}: configuration is valid\n`);
  const report = await connector.validate(newRequestContext());
  for (const check of report.checks) io.stdout.write(`${name}: ${check}\n`);
  io.stdout.write(`${name}: ready to sync\n`);
}
