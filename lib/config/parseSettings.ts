import type * as z from "zod";
import { ConfigError, type ConfigIssue, CredentialsRejectedError } from "../errors";
import { blankToUndefined, type Environment } from "./environment";

/**
 * Marks a validation issue as one the upstream would answer by rejecting the credentials, so it
 * exits 3 like the upstream's own answer (docs/command-line.md: a scope without `instance_`).
 */
export const CREDENTIALS_ISSUE = { credentials: true } as const;

/**
 * Validates the variables of one connector with its schema, whose keys are the variable names.
 * Every problem is reported at once; each names its variable, says what is wrong and how to fix
 * it. `hints` says, per variable, where its value comes from (used when it is missing).
 */
export function parseSettings<Schema extends z.ZodType>(
  schema: Schema,
  env: Environment,
  hints: Readonly<Record<string, string>>,
): z.output<Schema> {
  const input = Object.fromEntries(
    Object.keys(hints).map((name) => [name, blankToUndefined(env[name])]),
  );
  const result = schema.safeParse(input);
  if (result.success) return result.data;

  const issues: ConfigIssue[] = [];
  let credentials: { field: string; text: string } | undefined;
  for (const issue of result.error.issues) {
    const variable = String(issue.path[0] ?? "configuration");
    const missing = issue.path.length > 0 && input[variable] === undefined;
    const message = missing ? `is not set; ${hints[variable] ?? "set it"}` : issue.message;
    if (
      issue.code === "custom" &&
      (issue.params as { credentials?: boolean } | undefined)?.credentials
    ) {
      credentials ??= { field: variable, text: `${variable}: ${message}` };
    } else {
      issues.push({ variable, message });
    }
  }
  if (issues.length > 0) throw new ConfigError(issues);
  throw new CredentialsRejectedError(credentials?.text ?? "the configuration was rejected", {
    field: credentials?.field,
  });
}
