import { ConnectorError } from "../errors";
import type { ActionErrorCode } from "./reply";

/** A provisioning failure with its reply code, raised by a connector's provisioner. */
export class ActionError extends ConnectorError {
  override name = "ActionError";
  override readonly code: ActionErrorCode;

  constructor(code: ActionErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * A `requestId` that cannot be run: remembered for another request (the same id with another
 * action or arguments), or being carried out right now by another invocation (the cloud's only).
 */
export class RequestIdTakenError extends ConnectorError {
  override name = "RequestIdTakenError";
  override readonly code: "request_id_reused" | "request_in_progress";

  constructor(code: RequestIdTakenError["code"], requestId: string) {
    super(
      code === "request_id_reused"
        ? `requestId ${requestId} was used before for a different request`
        : `the request ${requestId} is being carried out right now`,
    );
    this.code = code;
  }
}
