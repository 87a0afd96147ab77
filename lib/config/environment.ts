import { readFileSync } from "node:fs";
import { parseEnv } from "node:util";
import { ConfigError } from "../errors";
import { registerSecret } from "../redact";

export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * The variables a command sees: the env file's, overridden by the process environment
 * (CONTRACTS.md section 1: a variable set in the environment wins over the file).
 */
export function loadEnvironment(options: { envFile?: string; env?: Environment }): Environment {
  const env = options.env ?? process.env;
  if (!options.envFile) return env;
  let text: string;
  try {
    text = readFileSync(options.envFile, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new ConfigError([
      {
        variable: "--env-file",
        message: `cannot read ${options.envFile} (${reason}); give the path of a readable KEY=value file`,
      },
    ]);
  }
  return { ...parseEnv(text), ...definedOnly(env) };
}

function definedOnly(env: Environment): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

/**
 * Resolves secret variables: each `NAME` may instead be given as `NAME_FILE`, a path to read it
 * from (trailing newline dropped). Setting both is an error. Every secret value is registered for
 * redaction before anything else can print it.
 */
export function resolveSecrets(env: Environment, secretNames: readonly string[]): Environment {
  const resolved: Record<string, string | undefined> = { ...env };
  const issues: { variable: string; message: string }[] = [];
  for (const name of secretNames) {
    const direct = blankToUndefined(env[name]);
    const file = blankToUndefined(env[`${name}_FILE`]);
    if (direct !== undefined && file !== undefined) {
      issues.push({
        variable: name,
        message: `both ${name} and ${name}_FILE are set; keep one of them`,
      });
      continue;
    }
    if (file !== undefined) {
      try {
        resolved[name] = readFileSync(file, "utf8").replace(/\r?\n$/, "");
      } catch (error) {
        const reason = (error as NodeJS.ErrnoException).code ?? String(error);
        issues.push({
          variable: `${name}_FILE`,
          message: `cannot read ${file} (${reason}); give the path of a file that holds the value`,
        });
        continue;
      }
    }
    registerSecret(resolved[name]);
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return resolved;
}

/** Empty values count as unset: `NAME=` in an env file is a common way to leave a field out. */
export function blankToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}
