import { constants } from "node:fs";
import { access, mkdir } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { blankToUndefined, type Environment } from "../config/environment";
import type { SettingMeta } from "../config/fields";
import {
  CONNECTOR_CHOICES,
  CONNECTOR_NAMES,
  type ConnectorName,
  connectorNamed,
  parseConnectorName,
} from "../connectors";
import { ConfigError, type ConfigIssue, UsageError } from "../errors";
import { MAX_REMOVAL_VARIABLE, parseRemovalLimit } from "../guard";
import { loadPlatformConfig, type PlatformConfig } from "../platform";
import { HEALTH_FILE_NAME, SERVICE_VARIABLES } from "./constants";
import { type HttpSettings, loadHttpSettings } from "./httpSettings";
import { isLogLevel, LOG_LEVELS, type LogLevel } from "./jsonLogger";

/** What service mode runs with: validated once at start (docs/configuration.md, docs/service.md). */
export interface ServiceConfig {
  connector: ConnectorName;
  platform: PlatformConfig;
  /** Remembered replies and labels, temporary sync files; one service per directory. */
  stateDir: string;
  healthFile: string;
  /** CONNECTOR_HTTP_PORT and _HOST: where /livez, /readyz, /metrics, /status are served; unset: nowhere. */
  http: HttpSettings | undefined;
  logLevel: LogLevel;
  /** Announced in `hello`: `sync`, plus the actions this host will carry out. */
  capabilities: string[];
}

/** What docs/configuration.md says of the variables read by hand below (no schema holds them). */
export const SERVICE_VARIABLE_DOCS: Record<
  (typeof SERVICE_VARIABLES)[keyof typeof SERVICE_VARIABLES],
  SettingMeta
> = {
  CONNECTOR_NAME: {
    type: CONNECTOR_NAMES.map((name) => `\`${name}\``).join(" or "),
    defaultText: "the argument of `service`",
    description:
      "The connector, when not given as the argument of `service` (both given, and different, is an error).",
  },
  CONNECTOR_STATE_DIR: {
    type: "directory",
    defaultText:
      "`/var/lib/access-connectors` in the image; else `$XDG_STATE_HOME/access-connectors` or `~/.local/state/access-connectors`",
    description:
      "Remembered action replies, the last label, task finishes not yet delivered, temporary sync files, the removal guard's digest and held snapshot. One service per directory: a second one exits 2.",
  },
  CONNECTOR_HEALTH_FILE: {
    type: "file",
    defaultText: `\`${HEALTH_FILE_NAME}\` in the state directory`,
    description: "The health file, rewritten every 5 seconds (docs/service.md).",
  },
  CONNECTOR_LOG_LEVEL: {
    type: LOG_LEVELS.map((level) => `\`${level}\``).join(", "),
    defaultText: "`info`",
    description: "The least level of the JSON log lines on stdout; `--verbose` is `debug`.",
  },
};

/** `$XDG_STATE_HOME/access-connectors`, or `~/.local/state/access-connectors`. */
export function defaultStateDir(env: Environment): string {
  const base = blankToUndefined(env.XDG_STATE_HOME) ?? join(homedir(), ".local", "state");
  return join(base, "access-connectors");
}

/** CONNECTOR_LOG_LEVEL, or `info`; an unknown value is reported by `loadServiceConfig`. */
export function logLevelOf(env: Environment, verbose = false): LogLevel {
  if (verbose) return "debug";
  const value = blankToUndefined(env[SERVICE_VARIABLES.logLevel])?.trim().toLowerCase();
  return value !== undefined && isLogLevel(value) ? value : "info";
}

/**
 * Validates everything service mode needs before it announces itself: the connector (the
 * argument, or CONNECTOR_NAME), its variables, the platform's, the state directory (created when
 * missing) and the health file's directory. Every problem is reported at once, each naming its
 * variable (exit 2). A scope the upstream would refuse exits 3, as `sync` does.
 */
export async function loadServiceConfig(
  argument: string | undefined,
  env: Environment,
  verbose = false,
): Promise<ServiceConfig> {
  const issues: ConfigIssue[] = [];
  const collect = <T>(load: () => T): T | undefined => {
    try {
      return load();
    } catch (error) {
      if (!ConfigError.is(error)) throw error;
      issues.push(...error.issues);
      return undefined;
    }
  };

  const connector = connectorOf(argument, env, issues);
  const platform = collect(() => loadPlatformConfig(env));
  if (connector) collect(() => connectorNamed(connector).sync(env));
  collect(() => parseRemovalLimit(env[MAX_REMOVAL_VARIABLE], MAX_REMOVAL_VARIABLE));
  const http = collect(() => loadHttpSettings(env));

  const level = blankToUndefined(env[SERVICE_VARIABLES.logLevel])?.trim().toLowerCase();
  if (level !== undefined && !isLogLevel(level)) {
    issues.push({
      variable: SERVICE_VARIABLES.logLevel,
      message: `"${level}" is not a level; use one of ${LOG_LEVELS.join(", ")}`,
    });
  }

  const stateDir = resolve(
    blankToUndefined(env[SERVICE_VARIABLES.stateDir]) ?? defaultStateDir(env),
  );
  const stateProblem = await writableDirectory(stateDir, true);
  if (stateProblem) {
    issues.push({
      variable: SERVICE_VARIABLES.stateDir,
      message: `${stateProblem}; set it to a directory this user can write (the container's is a volume at /var/lib/access-connectors)`,
    });
  }
  const healthFile = resolve(
    blankToUndefined(env[SERVICE_VARIABLES.healthFile]) ?? join(stateDir, HEALTH_FILE_NAME),
  );
  const healthProblem = stateProblem
    ? undefined
    : await writableDirectory(dirname(healthFile), false);
  if (healthProblem) {
    issues.push({
      variable: SERVICE_VARIABLES.healthFile,
      message: `${healthProblem}; set it to a file in a directory this user can write`,
    });
  }

  if (issues.length > 0 || !connector || !platform) throw new ConfigError(issues);
  return {
    connector,
    platform,
    stateDir,
    healthFile,
    http,
    logLevel: logLevelOf(env, verbose),
    capabilities: connectorNamed(connector).capabilities(env),
  };
}

function connectorOf(
  argument: string | undefined,
  env: Environment,
  issues: ConfigIssue[],
): ConnectorName | undefined {
  const variable = blankToUndefined(env[SERVICE_VARIABLES.name]);
  const given = argument ?? variable;
  if (given === undefined) {
    issues.push({
      variable: SERVICE_VARIABLES.name,
      message: `is not set and no connector was given; pass it as the argument (service ${CONNECTOR_NAMES[0]}) or set CONNECTOR_NAME to ${CONNECTOR_CHOICES}`,
    });
    return undefined;
  }
  let name: ConnectorName;
  try {
    name = parseConnectorName(given);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    issues.push({
      variable: argument === undefined ? SERVICE_VARIABLES.name : "<connector>",
      message: error.message,
    });
    return undefined;
  }
  if (argument !== undefined && variable !== undefined && variable.trim().toLowerCase() !== name) {
    issues.push({
      variable: SERVICE_VARIABLES.name,
      message: `is "${variable}" but the argument says "${argument}"; give one of them, or the same connector in both`,
    });
    return undefined;
  }
  return name;
}

/** Undefined when `dir` is a writable directory (created first when `create`); else the problem. */
async function writableDirectory(dir: string, create: boolean): Promise<string | undefined> {
  try {
    if (create) await mkdir(dir, { recursive: true });
    await access(dir, constants.W_OK);
    return undefined;
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    return `cannot use ${dir} (${reason})`;
  }
}
