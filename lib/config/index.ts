export {
  BOUND_DEFAULTS,
  type Bound,
  boundSettings,
  type UpstreamBounds,
  upstreamBounds,
} from "./bounds";
export { type Environment, loadEnvironment, resolveSecrets } from "./environment";
export {
  baseUrl,
  DNS_LABEL,
  durationSetting,
  formatDuration,
  integerSetting,
  parseDuration,
  type SettingMeta,
  UUID,
} from "./fields";
export { CREDENTIALS_ISSUE, parseSettings } from "./parseSettings";
