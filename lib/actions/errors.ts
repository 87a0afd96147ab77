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

  static override is(error: unknown): error is ActionError {
    return error instanceof ActionError;
  }
}
