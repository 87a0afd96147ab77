/** The action reply (docs/actions.md) and its error codes. */

export const ACTION_ERROR_CODES = [
  "invalid_request",
  "provisioning_disabled",
  "unsupported",
  "auth_failed",
  "not_found",
  "member_type_unavailable",
  "revoke_not_allowed",
  "rate_limited",
  "upstream_error",
] as const;
export type ActionErrorCode = (typeof ACTION_ERROR_CODES)[number];

/** Only these may succeed if asked again later. */
export const RETRYABLE_CODES: ReadonlySet<ActionErrorCode> = new Set([
  "rate_limited",
  "upstream_error",
]);

export interface UserStateResult {
  user_id: string;
  active: boolean;
  changed: boolean;
}

export interface CreateAccountResult {
  user_id: string;
  created: boolean;
}

export interface MemberTypeResult {
  user_id: string;
  member_type: string;
  changed: boolean;
}

export type ActionResult = UserStateResult | CreateAccountResult | MemberTypeResult;

export type ActionReply =
  | { requestId: string; status: "succeeded"; result: ActionResult }
  | {
      requestId: string;
      status: "failed";
      error: { code: ActionErrorCode; message: string; retryable: boolean };
    };
