export { askServiceToRelease } from "./askServiceToRelease";
export { Backoff, type BackoffSettings } from "./Backoff";
export { ConnectorService, type ServiceOptions } from "./ConnectorService";
export {
  defaultStateDir,
  loadServiceConfig,
  logLevelOf,
  type ServiceConfig,
} from "./config";
export {
  HEALTH_STALE_AFTER_MS,
  RELEASE_WAIT_MS,
  SERVICE_NAME,
  SERVICE_VARIABLES,
  SHUTDOWN_DEADLINE_MS,
} from "./constants";
export {
  describeSyncFailure,
  describeUploadFailure,
} from "./describeFailure";
export type { HealthReport } from "./HealthFile";
export {
  createJsonLogger,
  type JsonLogger,
  type JsonLoggerOptions,
  LOG_LEVELS,
  type LogLevel,
} from "./jsonLogger";
