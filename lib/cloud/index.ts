export { handleAction } from "./action";
export { type CloudConfig, loadCloudConfig } from "./config";
export { finalizeRecord, finalizeRun } from "./finalize";
export { openInstance, UnknownInstanceError } from "./instanceRuntime";
export {
  collectInstanceSettings,
  connectorIdSchema,
  deleteInstanceSecret,
  secretName,
  writeInstanceSecret,
} from "./instanceSettings";
export { InstanceRegistry, type InstanceRow, isDue } from "./instances";
export { failRun, type StartAnswer, startRun } from "./lifecycle";
export { finalizeMessage } from "./messages";
export type { Telemetry } from "./observability";
export { type RunItem, RunStore } from "./runs";
export { schedule, syncNowRequest } from "./scheduler";
export { processJobMessage } from "./syncWorker";
