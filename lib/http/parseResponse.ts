import type { z } from "zod";
import { UnexpectedResponseError } from "./errors";
import { redact } from "./redact";

/**
 * Parses an upstream body (`response.body`; wrap a value taken out of a body as `{ body }`) at the
 * boundary. A body that does not fit fails with the request, the
 * path of each problem inside the body and what was expected, never with the body itself.
 */
export function parseResponse<Schema extends z.ZodType>(
  schema: Schema,
  response: { body: unknown },
  what: string,
): z.output<Schema> {
  const result = schema.safeParse(response.body);
  if (result.success) return result.data;
  const problems = result.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(body)"}: ${issue.message}`)
    .join("; ");
  throw new UnexpectedResponseError(redact(`${what}: unexpected response body (${problems})`));
}
