import * as z from "zod";
import { upstreamId } from "../upstreamId";

/** The upstream's payloads, parsed at the boundary. Unknown fields are ignored. */

const id = upstreamId;
const optionalText = z.string().nullish();

/**
 * RFC 6749 section 5.1. `expires_in` is only RECOMMENDED (some servers send it as a numeric
 * string); an absent `token_type` is read as the Bearer type BlackLine documents.
 */
export const tokenResponse = z.object({
  access_token: z.string().min(1),
  expires_in: z
    .union([z.number(), z.string().regex(/^\d+$/).transform(Number)])
    .pipe(z.number().positive())
    .optional(),
  token_type: z.string().min(1).optional(),
});

/** RFC 6749 section 5.2 error body. */
export const oauthError = z.object({
  error: z.string(),
  error_description: z.string().optional(),
});

export const user = z.object({
  id,
  loginId: z.string().min(1),
  firstName: optionalText,
  lastName: optionalText,
  fullName: optionalText,
  email: optionalText,
  /** Confirmed boolean; there is no status string. Absent is read as active. */
  isActive: z.boolean().nullish(),
  jobTitle: optionalText,
  timeZoneId: z.union([z.string(), z.number()]).nullish(),
  phoneNumber: optionalText,
  lastUpdated: optionalText,
  /** Assumption: the user's role is on the record: `defaultRoleId`, and a `roles` array if present. */
  defaultRoleId: id.nullish(),
  roles: z.array(z.union([id, z.object({ id })])).nullish(),
});
export type User = z.output<typeof user>;

export const team = z.object({ id, name: z.string(), uniqueCode: optionalText });
export type Team = z.output<typeof team>;

export const role = z.object({ id, name: z.string() });
export type Role = z.output<typeof role>;

/** Confirmed list shape. `totalItems` is read when present; each item is parsed on its own. */
export const listResponse = z.object({
  items: z.array(z.unknown()),
  totalItems: z.number().int().nonnegative().optional(),
});

/** Membership pages are read for their ids only, whichever side they list. */
export const idOnly = z.object({ id });
