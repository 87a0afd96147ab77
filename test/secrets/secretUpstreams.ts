import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type BlacklineSimulator,
  type BlacklineSimulatorOptions,
  startBlacklineSimulator,
} from "../../lib/simulators/blackline";
import { type PlatformSimulator, startPlatformSimulator } from "../../lib/simulators/platform";
import { startValimailSimulator, type ValimailSimulator } from "../../lib/simulators/valimail";
import { makeTempDir } from "../helpers/tempDir";
import { type RecordingServer, startRecordingServer } from "../property/recordingServer";
import { ECHO_TOKEN } from "./echoUpstream";
import { BLACKLINE_CLIENT_ID, basicToken, leakChecker, SECRETS } from "./secretForms";

/**
 * What the secrets tests run against: BlackLine, Valimail and platform simulators that accept
 * only the distinctive SECRETS, an upstream that echoes what it is sent, the secret files (with trailing line breaks, so they are sent trimmed), the environment that
 * points each connector at them, and the record of every output the test then searches for any
 * form of a secret or token.
 */
export interface SecretUpstreamsOptions {
  /** Prefix of the temporary directory that holds the secret files (and whatever the test writes). */
  tempPrefix: string;
  /** The BlackLine tenant's size and faults. */
  blackline: Pick<BlacklineSimulatorOptions, "size" | "faults">;
  /**
   * How the connector gets the Valimail app id: `file` (CONNECTOR_EMAILAUTH_APP_ID_FILE, a file
   * ending in CRLF), `padded` (the variable with spaces around it) or `plain` (the variable as is).
   */
  valimailAppId: "file" | "padded" | "plain";
  /**
   * Whether each connector's environment carries the platform's variables, and how the platform
   * secret is given: from a file (ending in a line break) or as CONNECTOR_CLIENT_SECRET.
   */
  platformVariables?: "secret file" | "secret variable";
  /** The platform's poll interval (default the simulator's). */
  platformPollSeconds?: number;
}

export interface SecretUpstreams {
  blackline: BlacklineSimulator;
  valimail: ValimailSimulator;
  /** Started with the platform secret, whether or not the connectors are pointed at it. */
  platform: PlatformSimulator;
  echo: RecordingServer;
  dir: string;
  /** Everything the code under test wrote, each with what it is; searched by `leaks`. */
  outputs: { what: string; text: string }[];
  /** Keeps a run's stdout and stderr. */
  record(what: string, run: { stdout: string; stderr: string }): void;
  blacklineEnv(baseUrl: string, clientAuth: "body" | "basic"): Record<string, string>;
  valimailEnv(baseUrl: string): Record<string, string>;
  /** Every form of a secret or an issued token found in `outputs`, each named by its output. */
  leaks(): string[];
  close(): Promise<void>;
}

export async function startSecretUpstreams(
  options: SecretUpstreamsOptions,
): Promise<SecretUpstreams> {
  const dir = await makeTempDir(options.tempPrefix);
  await writeFile(join(dir, "api-key"), `${SECRETS.blacklineApiKey}\n\n`);
  await writeFile(join(dir, "app-id"), `${SECRETS.valimailAppId}\r\n`);
  await writeFile(join(dir, "platform-secret"), `${SECRETS.platformSecret}\n`);
  const blackline = await startBlacklineSimulator({
    ...options.blackline,
    credentials: {
      clientId: BLACKLINE_CLIENT_ID,
      clientSecret: SECRETS.blacklineClientSecret,
      username: "api.admin",
      apiKey: SECRETS.blacklineApiKey,
    },
  });
  const valimail = await startValimailSimulator({
    users: 12,
    credentials: { clientId: SECRETS.valimailClientId, appId: SECRETS.valimailAppId },
  });
  const platform = await startPlatformSimulator({
    pollIntervalSeconds: options.platformPollSeconds,
    clientSecret: SECRETS.platformSecret,
  });
  const echo = await startRecordingServer();
  const outputs: { what: string; text: string }[] = [];

  /** The platform's variables, the secret as the options say; none if they ask for none. */
  function platformEnv(): Record<string, string> {
    if (!options.platformVariables) return {};
    return {
      CONNECTOR_PLATFORM_URL: platform.url,
      CONNECTOR_CLIENT_ID: platform.credentials.clientId,
      ...(options.platformVariables === "secret file"
        ? { CONNECTOR_CLIENT_SECRET_FILE: join(dir, "platform-secret") }
        : { CONNECTOR_CLIENT_SECRET: SECRETS.platformSecret }),
    };
  }

  const appId: Record<string, string> = {
    file: { CONNECTOR_EMAILAUTH_APP_ID_FILE: join(dir, "app-id") },
    padded: { CONNECTOR_EMAILAUTH_APP_ID: `  ${SECRETS.valimailAppId} ` },
    plain: { CONNECTOR_EMAILAUTH_APP_ID: SECRETS.valimailAppId },
  }[options.valimailAppId];

  return {
    blackline,
    valimail,
    platform,
    echo,
    dir,
    outputs,
    record(what, run) {
      outputs.push(
        { what: `${what} stdout`, text: run.stdout },
        { what: `${what} stderr`, text: run.stderr },
      );
    },
    blacklineEnv: (baseUrl, clientAuth) => ({
      CONNECTOR_ACCOUNTING_CLIENT_ID: BLACKLINE_CLIENT_ID,
      CONNECTOR_ACCOUNTING_CLIENT_SECRET: SECRETS.blacklineClientSecret,
      CONNECTOR_ACCOUNTING_API_KEY_FILE: join(dir, "api-key"),
      CONNECTOR_ACCOUNTING_USERNAME: "api.admin",
      CONNECTOR_ACCOUNTING_SCOPE: blackline.scope,
      CONNECTOR_ACCOUNTING_BASE_URL: baseUrl,
      CONNECTOR_ACCOUNTING_CLIENT_AUTH: clientAuth,
      CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0",
      ...platformEnv(),
    }),
    valimailEnv: (baseUrl) => ({
      CONNECTOR_EMAILAUTH_CLIENT_ID: SECRETS.valimailClientId,
      ...appId,
      CONNECTOR_EMAILAUTH_SLUG: valimail.slug,
      CONNECTOR_EMAILAUTH_BASE_URL: baseUrl,
      CONNECTOR_EMAILAUTH_REQUESTS_PER_SECOND: "0",
      CONNECTOR_PROVISIONING: "true",
      ...platformEnv(),
    }),
    leaks() {
      const found = leakChecker(
        [
          ...Object.values(SECRETS),
          ...blackline.issuedTokens(),
          ...valimail.issuedTokens(),
          ...platform.issuedTokens(),
          ECHO_TOKEN,
        ],
        [basicToken(BLACKLINE_CLIENT_ID, SECRETS.blacklineClientSecret)],
      );
      return outputs.flatMap(({ what, text }) => found(text).map((leak) => `${what}: ${leak}`));
    },
    async close() {
      await Promise.all([blackline.close(), valimail.close(), platform.close(), echo.close()]);
    },
  };
}
