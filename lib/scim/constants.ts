/** SCIM 2.0 names (RFC 7643, RFC 7644). */
export const SCIM_MEDIA_TYPE = "application/scim+json";

export const SCHEMA = {
  user: "urn:ietf:params:scim:schemas:core:2.0:User",
  listResponse: "urn:ietf:params:scim:api:messages:2.0:ListResponse",
  patchOp: "urn:ietf:params:scim:api:messages:2.0:PatchOp",
  error: "urn:ietf:params:scim:api:messages:2.0:Error",
} as const;

/** RFC 7644 section 3.4.2.4: indexes start at 1. */
export const FIRST_INDEX = 1;
