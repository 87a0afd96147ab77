import { rmSync } from "node:fs";
import packageJson from "../../../package.json" with { type: "json" };
import { loadEnvironment } from "../../config";
import { ConfigError, ConnectorError } from "../../errors";
import {
  ConnectorService,
  createJsonLogger,
  loadServiceConfig,
  logLevelOf,
  SHUTDOWN_DEADLINE_MS,
} from "../../service";
import type { CliIo } from "../io";

export interface ServiceCommandOptions {
  /** The argument; CONNECTOR_NAME when not given. */
  connector?: string;
  envFile?: string;
  verbose?: boolean;
}

/** What the command needs of its process; tests of the command in-process pass their own. */
export interface ServiceProcess {
  onSignal(handler: (signal: NodeJS.Signals) => void): () => void;
  exit(code: number): void;
}

const STOP_SIGNALS = ["SIGTERM", "SIGINT"] as const;

const realProcess: ServiceProcess = {
  onSignal(handler) {
    for (const signal of STOP_SIGNALS) process.on(signal, handler);
    return () => {
      for (const signal of STOP_SIGNALS) process.off(signal, handler);
    };
  },
  exit: (code) => process.exit(code),
};

/**
 * `access-connectors service [connector]`: JSON log lines on stdout, configuration checked before
 * anything else (exit 2 naming the variable), then the service until SIGTERM or SIGINT, after
 * which it exits 0. A stop that overruns its deadline (or a second signal) removes the temporary
 * files and exits at once.
 */
export async function serviceCommand(
  io: CliIo,
  options: ServiceCommandOptions,
  host: ServiceProcess = realProcess,
): Promise<number> {
  const readEnv = () => loadEnvironment({ envFile: options.envFile, env: io.env });
  const env = readEnv();
  const logger = createJsonLogger({
    write: (line) => io.stdout.write(line),
    level: logLevelOf(env, options.verbose),
  });
  let config: Awaited<ReturnType<typeof loadServiceConfig>>;
  try {
    config = await loadServiceConfig(options.connector, env, options.verbose);
  } catch (error) {
    if (ConnectorError.is(error)) {
      logger.error("the service cannot start", {
        error,
        ...(ConfigError.is(error) ? { issues: error.issues } : {}),
      });
    }
    throw error;
  }
  const service = new ConnectorService({
    config,
    readEnv,
    logger: logger.child({ connector: config.connector, hostId: config.platform.hostId }),
    version: packageJson.version,
  });
  let deadline: NodeJS.Timeout | undefined;
  const exitNow = (reason: string) => {
    logger.warn("exiting without finishing the stop", { reason });
    rmSync(service.tempDir, { recursive: true, force: true });
    host.exit(0);
  };
  const detach = host.onSignal((signal) => {
    if (service.stopping) {
      exitNow(`${signal} received again`);
      return;
    }
    service.stop(signal);
    deadline = setTimeout(() => exitNow("the stop took too long"), SHUTDOWN_DEADLINE_MS);
    deadline.unref();
  });
  try {
    await service.run();
  } finally {
    clearTimeout(deadline);
    detach();
  }
  return 0;
}
