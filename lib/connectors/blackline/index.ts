export { BlacklineSyncer } from "./BlacklineSyncer";
export { BLACKLINE_VARIABLES, type BlacklineConfig, loadBlacklineConfig } from "./config";
export { blacklineDefinition } from "./definition";
