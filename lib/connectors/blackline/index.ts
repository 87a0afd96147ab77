export { BlacklineConnector } from "./BlacklineConnector";
export {
  BLACKLINE_SECRET_VARIABLES,
  BLACKLINE_VARIABLES,
  type BlacklineConfig,
  loadBlacklineConfig,
} from "./config";
