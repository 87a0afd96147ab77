import { ConnectorError } from "../../errors";
import type { SettingsErrorCode } from "./reply";

/** A settings request that cannot be carried out, with its reply code (docs/settings.md). */
export class SettingsError extends ConnectorError {
  override name = "SettingsError";
  override readonly code: SettingsErrorCode;
  /** Whether asking again later may succeed (a run that ends; a store that answers again). */
  readonly retryable: boolean;

  constructor(
    code: SettingsErrorCode,
    message: string,
    options: ErrorOptions & { retryable?: boolean } = {},
  ) {
    super(message, options);
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}
