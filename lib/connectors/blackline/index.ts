export { BlacklineConnector } from "./BlacklineConnector";
export { type BlacklineConfig, loadBlacklineConfig } from "./config";
