export { answerSettings, type SettingsOptions } from "./answerSettings";
export { handleSettings } from "./handleSettings";
export { type FieldError, fieldError, type SettingsErrorCode, type SettingsReply } from "./reply";
export { type SettingsRequest, settingsRequest } from "./request";
export {
  type InstanceSummary,
  instanceSummary,
  type SaveResult,
  type SettingsStage,
} from "./stageInstances";
