import * as z from "zod";
import { describeErrorBody, HttpStatusError } from "../http";

/** The SCIM error body (RFC 7644 section 3.12); `status` is a string on the wire. */
export const scimErrorBody = z.object({
  schemas: z.array(z.string()).optional(),
  status: z.union([z.string(), z.number()]).optional(),
  scimType: z.string().optional(),
  detail: z.string().optional(),
});

/** An error answer from a SCIM service provider: the HTTP error plus the SCIM fields, typed. */
export class ScimError extends HttpStatusError {
  override name = "ScimError";
  readonly scimType: string | undefined;
  readonly detail: string | undefined;

  constructor(error: HttpStatusError) {
    const parsed = scimErrorBody.safeParse(error.body);
    const body = parsed.success ? parsed.data : {};
    super({
      status: error.status,
      request: error.request,
      body: error.body,
      ...(describeErrorBody(error.body) ? { detail: describeErrorBody(error.body) } : {}),
      ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    });
    this.scimType = body.scimType;
    this.detail = body.detail;
  }
}
