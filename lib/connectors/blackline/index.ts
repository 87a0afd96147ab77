export { BlacklineConnector } from "./BlacklineConnector";
export { BLACKLINE_VARIABLES, type BlacklineConfig, loadBlacklineConfig } from "./config";
export { blacklineDefinition } from "./definition";
