import * as z from "zod";
import { ConfigError, CredentialsRejectedError, describeIssues, messageOf } from "../errors";
import { HttpStatusError, RateLimitedError, type RequestContext } from "../http";
import { redact } from "../redact";
import { ActionError } from "./errors";
import {
  type ActionErrorCode,
  type ActionReply,
  type ActionResult,
  RETRYABLE_CODES,
} from "./reply";
import { type ActionRequest, actionRequest } from "./request";
import type { Provisioner } from "./types";

/** The request id to answer with when the request is too broken to carry one. */
const UNKNOWN_REQUEST_ID = "unknown";

/**
 * Parses one action request and runs it on the provisioner `resolve` gives for its connector.
 * Always answers with a reply, never throws: a request that does not parse is `invalid_request`
 * and nothing is sent upstream.
 */
export async function runAction(
  raw: unknown,
  resolve: (request: ActionRequest) => Provisioner | Promise<Provisioner>,
  ctx: RequestContext,
): Promise<ActionReply> {
  const parsed = actionRequest.safeParse(raw);
  if (!parsed.success) {
    const requestId = z.object({ requestId: z.string().min(1) }).safeParse(raw);
    return failedReply(
      requestId.success ? requestId.data.requestId : UNKNOWN_REQUEST_ID,
      "invalid_request",
      describeIssues(parsed.error.issues, "request", Number.POSITIVE_INFINITY),
    );
  }
  const request = parsed.data;
  try {
    const provisioner = await resolve(request);
    const result = await perform(provisioner, request, ctx);
    return { requestId: request.requestId, status: "succeeded", result };
  } catch (error) {
    const { code, message } = classify(error);
    return failedReply(request.requestId, code, message);
  }
}

function perform(
  provisioner: Provisioner,
  request: ActionRequest,
  ctx: RequestContext,
): Promise<ActionResult> {
  switch (request.action) {
    case "enable_user":
      return provisioner.enableUser(request.args.user_id, ctx);
    case "disable_user":
      return provisioner.disableUser(request.args.user_id, ctx);
    case "create_account":
      return provisioner.createAccount(request.args, ctx);
    case "grant":
      return provisioner.grant(request.args.user_id, request.args.entitlement_id, ctx);
    case "revoke":
      return provisioner.revoke(request.args.user_id, request.args.entitlement_id, ctx);
  }
}

/** A failure reply; its message is redacted, and `retryable` follows from the code. */
export function failedReply(
  requestId: string,
  code: ActionErrorCode,
  message: string,
): ActionReply {
  return {
    requestId,
    status: "failed",
    error: { code, message: redact(message), retryable: RETRYABLE_CODES.has(code) },
  };
}

function classify(error: unknown): { code: ActionErrorCode; message: string } {
  const message = messageOf(error);
  if (ActionError.is(error)) return { code: error.code, message };
  if (error instanceof ConfigError) return { code: "invalid_request", message };
  if (error instanceof CredentialsRejectedError) return { code: "auth_failed", message };
  if (RateLimitedError.is(error)) return { code: "rate_limited", message };
  if (HttpStatusError.is(error)) {
    if (error.status === 429) return { code: "rate_limited", message };
    if (error.status === 404) return { code: "not_found", message };
  }
  return { code: "upstream_error", message };
}
