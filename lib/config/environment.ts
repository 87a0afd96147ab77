import { readFileSync, type Stats, statSync } from "node:fs";
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
      const read = readSecretFile(file);
      if ("problem" in read) {
        issues.push({ variable: `${name}_FILE`, message: read.problem });
        continue;
      }
      resolved[name] = read.value;
    }
    // The value as sent is the trimmed one (the schemas trim): both forms are redacted.
    registerSecret(resolved[name]);
    registerSecret(resolved[name]?.trim());
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return resolved;
}

/** A secret file is small: a key, a token, a password. */
const MAX_SECRET_FILE_BYTES = 64 * 1024;

/**
 * Reads a `<NAME>_FILE`: a regular file only (a FIFO would block, a device never end), at most
 * 64 KiB, trailing line breaks dropped.
 */
function readSecretFile(file: string): { value: string } | { problem: string } {
  let stats: Stats;
  try {
    stats = statSync(file);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    return {
      problem: `cannot read ${file} (${reason}); give the path of a file that holds the value`,
    };
  }
  if (!stats.isFile()) {
    return {
      problem: `${file} is not a regular file; give the path of a file that holds the value`,
    };
  }
  if (stats.size > MAX_SECRET_FILE_BYTES) {
    return {
      problem: `${file} is ${stats.size} bytes, more than a secret's ${MAX_SECRET_FILE_BYTES}; give the path of the file that holds only the value`,
    };
  }
  try {
    return { value: readFileSync(file, "utf8").replace(/[\r\n]+$/, "") };
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    return {
      problem: `cannot read ${file} (${reason}); give the path of a file that holds the value`,
    };
  }
}

/** Empty values count as unset: `NAME=` in an env file is a common way to leave a field out. */
export function blankToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}
