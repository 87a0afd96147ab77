import { ConnectorError } from "../../errors";

/** The server served the same page twice: it ignores the page parameter. */
export class RepeatedPageError extends ConnectorError {
  override name = "RepeatedPageError";
}
