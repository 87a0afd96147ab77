export { type Environment, loadEnvironment, resolveSecrets } from "./environment";
export { baseUrl, DNS_LABEL, integerSetting, UUID } from "./fields";
export { CREDENTIALS_ISSUE, parseSettings } from "./parseSettings";
