export { answerSettings, type SettingsOptions } from "./answerSettings";
export { SettingsError } from "./errors";
export { handleSettings } from "./handleSettings";
export {
  type FieldError,
  fieldError,
  SETTINGS_ERROR_CODES,
  type SettingsErrorCode,
  type SettingsReply,
} from "./reply";
export { type SettingsRequest, settingsRequest } from "./request";
export {
  type InstanceSummary,
  instanceSummary,
  MASK,
  type SaveResult,
  type SettingsStage,
} from "./stageInstances";
