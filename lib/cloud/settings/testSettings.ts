import { connectorNamed } from "../../connectors";
import { newRequestContext, type UpstreamOptions } from "../../http";
import type { Logger } from "../../logging";
import { readStoredSettings, secretName } from "../aws/instanceSecret";
import type { TestRequest } from "./request";
import { settingsToStore } from "./settingsToStore";
import type { SettingsStage } from "./stageInstances";

/** Short: a Settings page waits on the answer, within the function's 30 s. */
const TEST_UPSTREAM: UpstreamOptions = {
  timeoutMs: 10_000,
  retry: { maxAttempts: 2, maxDelayMs: 1_000 },
};

export interface TestResult {
  connector: string;
  /** The upstream issued a token and answered a small read with it. */
  accepted: true;
  /** What was checked, as `validate` prints it. */
  checks: string[];
}

/**
 * `test`: what `validate` does, with nothing stored: the settings checked as a save checks them
 * (a `null` secret takes the stored value of `connectorId`, when given), then one token call and
 * one small read. Throws ConfigError for fields at fault (no request made),
 * CredentialsRejectedError when the upstream refused the credentials, and the HTTP layer's errors.
 */
export async function testSettings(
  stage: Pick<SettingsStage, "secretsPrefix">,
  request: TestRequest,
  logger: Logger,
): Promise<TestResult> {
  const { connectorId } = request;
  const keeps = connectorId !== undefined && Object.values(request.settings).includes(null);
  const stored = keeps
    ? await readStoredSettings(secretName(stage.secretsPrefix, connectorId))
    : undefined;
  const settings = settingsToStore(request.connector, request.settings, stored);
  const { connector } = connectorNamed(request.connector).sync(settings, TEST_UPSTREAM);
  const report = await connector.validate(newRequestContext({ logger, onRateLimit: "throw" }));
  return { connector: request.connector, accepted: true, checks: report.checks };
}
