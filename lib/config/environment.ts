import { readFileSync, type Stats, statSync } from "node:fs";
import { parseEnv } from "node:util";
import { ConfigError } from "../errors";
import { registerSecret } from "../redact";

export type Environment = Readonly<Record<string, string | undefined>>;

/** The variables a command sees: the env file's, each overridden by the process environment's. */
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
 * from, whose trailing whitespace is dropped (spaces, tabs and line breaks: what editors, `echo`,
 * templating tools and container secrets leave after the value; the credentials read here are
 * issued tokens, which never end in whitespace, and one that must can be set in `NAME` itself,
 * sent as given). Setting both is an error, and so is a secret of more than one line (a line break
 * between visible characters, in either form) or a file that holds no value: each is refused
 * here, naming the variable, before any request. Every secret value is registered for redaction
 * before anything else can print it.
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
    let value = direct;
    if (file !== undefined) {
      const read = readSecretFile(file);
      if ("problem" in read) {
        issues.push({ variable: `${name}_FILE`, message: read.problem });
        continue;
      }
      value = resolved[name] = read.value;
    }
    // Sent as it is or trimmed (Valimail's schema trims its ids): both forms are redacted.
    registerSecret(value);
    registerSecret(value?.trim());
    // A line break between visible characters: two lines of text where one value belongs.
    const lines = value?.trim().split(/\r\n|\r|\n/).length ?? 1;
    if (lines > 1) {
      issues.push(
        file === undefined
          ? {
              variable: name,
              message: `the value holds ${lines} lines of text; a secret is one line: set only the value`,
            }
          : {
              variable: `${name}_FILE`,
              message: `${file} holds ${lines} lines of text; a secret is one line: leave only the value in it`,
            },
      );
    }
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return resolved;
}

/** A secret file is small: a key, a token, a password. */
const MAX_SECRET_FILE_BYTES = 64 * 1024;

/**
 * Reads a `<NAME>_FILE`: a regular file only (a FIFO would block, a device never end), at most
 * 64 KiB, trailing whitespace dropped, something left.
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
  let value: string;
  try {
    value = readFileSync(file, "utf8").replace(/[ \t\r\n]+$/, "");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    return {
      problem: `cannot read ${file} (${reason}); give the path of a file that holds the value`,
    };
  }
  if (value === "") {
    return {
      problem: `${file} holds no value (it is empty or only whitespace); put the value in it`,
    };
  }
  return { value };
}

/** Empty values count as unset: `NAME=` in an env file is a common way to leave a field out. */
export function blankToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}
