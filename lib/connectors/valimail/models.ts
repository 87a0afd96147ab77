import * as z from "zod";
import { upstreamId } from "../upstreamId";
import { USER_EXTENSION } from "./constants";

/** Valimail's payloads, parsed at the boundary. Unknown fields are ignored. */

/** `/auth` answers `expires-at`; one support article spells it `expires_at`: both are read. */
export const authResponse = z
  .object({
    token: z.string().min(1),
    "expires-at": z.iso.datetime({ offset: true }).optional(),
    expires_at: z.iso.datetime({ offset: true }).optional(),
  })
  .refine((v) => v["expires-at"] ?? v.expires_at, { message: "expires-at is missing" })
  .transform((v) => ({
    token: v.token,
    expiresAt: Date.parse(v["expires-at"] ?? v.expires_at ?? ""),
  }));

/** The non-SCIM error body of `/auth`. */
export const authError = z.object({ message: z.string().optional(), type: z.string().optional() });

export const scimUser = z.object({
  id: upstreamId,
  userName: z.string().min(1),
  externalId: z.string().nullish(),
  name: z.object({ givenName: z.string().nullish(), familyName: z.string().nullish() }).nullish(),
  emails: z.array(z.object({ value: z.string(), primary: z.boolean().optional() })).nullish(),
  /** Absent is read as active, as RFC 7643 leaves it to the provider. */
  active: z.boolean().nullish(),
  /** Member type values are not checked against the published enum (it lacks `marketer`). */
  [USER_EXTENSION]: z.object({ memberType: z.string().min(1).nullish() }).nullish(),
  meta: z.object({ created: z.string().nullish(), lastModified: z.string().nullish() }).nullish(),
});
export type ScimUser = z.output<typeof scimUser>;

export const memberTypeOf = (user: ScimUser): string | undefined =>
  user[USER_EXTENSION]?.memberType ?? undefined;
export const isActive = (user: ScimUser): boolean => user.active !== false;
