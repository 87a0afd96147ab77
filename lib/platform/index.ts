export {
  loadPlatformConfig,
  loadPlatformConnection,
  PLATFORM_SECRET_VARIABLES,
  PLATFORM_VARIABLE_HINTS,
  type PlatformConfig,
  type PlatformConnection,
  parseInterval,
  platformConnectionSchema,
  platformSettingsSchema,
} from "./config";
export {
  CONTENT_SHA256_HEADER,
  DEFAULT_PLATFORM_RETRY,
  DEFAULT_SYNC_INTERVAL_MS,
  isRetryablePlatformStatus,
  PLATFORM_PATHS,
  STATUS_LABELS,
  type StatusLabel,
} from "./constants";
export { digestFile } from "./digestFile";
export {
  IntervalError,
  PlatformCredentialsError,
  PlatformResponseError,
  PlatformStatusError,
  SnapshotFileError,
} from "./errors";
export { type HelloAnswer, type PlatformTask, platformTask } from "./models";
export { PlatformClient } from "./PlatformClient";
export type {
  CallOptions,
  HelloRequest,
  PlatformClientOptions,
  TaskOutcome,
  UploadResult,
} from "./types";
