import * as z from "zod";

/**
 * The one action request shape (docs/actions.md), for the cloud action function, the CLI
 * and self-hosted tasks. Everything here is checked before any request goes upstream: an id that
 * could change the path it is put in (`/`, `..`, `?`, `#`, whitespace) never gets that far.
 */

/** An upstream object id: letters, digits, `_`, `-` and single inner dots, at most 128. */
const objectId = z
  .string()
  .max(128, "must be at most 128 characters")
  .regex(
    /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/,
    "must be an id of letters, digits, '_', '-' and single inner dots (no '/', '..', '?', '#' or whitespace)",
  );

const personName = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(256, "must be at most 256 characters")
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
  .regex(/^[^\u0000-\u001f\u007f]+$/, "must not contain control characters");

/** `{resourceType}:{id}:{slug}`, e.g. `member_type:owner:assigned`. */
const entitlementId = z
  .string()
  .regex(/^[a-z_]+:[A-Za-z0-9_.-]+:[a-z_]+$/, "must look like member_type:owner:assigned");

const userArgs = z.object({ user_id: objectId }).strict();
const entitlementArgs = z.object({ user_id: objectId, entitlement_id: entitlementId }).strict();

const base = {
  requestId: z.string().min(1).max(128),
  connectorId: z.string().min(1).max(128),
};

export const actionRequest = z.discriminatedUnion("action", [
  z.object({ ...base, action: z.literal("enable_user"), args: userArgs }).strict(),
  z.object({ ...base, action: z.literal("disable_user"), args: userArgs }).strict(),
  z
    .object({
      ...base,
      action: z.literal("create_account"),
      args: z
        .object({
          email: z.email("must be an email address"),
          given_name: personName,
          family_name: personName,
          member_type: z.string().min(1).optional(),
        })
        .strict(),
    })
    .strict(),
  z.object({ ...base, action: z.literal("grant"), args: entitlementArgs }).strict(),
  z.object({ ...base, action: z.literal("revoke"), args: entitlementArgs }).strict(),
]);

export type ActionRequest = z.infer<typeof actionRequest>;
export type CreateAccountArgs = Extract<ActionRequest, { action: "create_account" }>["args"];
