export { startPlatformSimulator } from "./server";
export {
  PLATFORM_ROUTES,
  type PlatformFaultKind,
  type PlatformFaultOptions,
  type PlatformRoute,
  type PlatformSimulator,
  type PlatformSimulatorOptions,
  type SimFinishedTask,
  type SimHello,
  type SimLabel,
  type SimRequestRecord,
  type SimTask,
  type SimTaskInput,
  type SimUpload,
} from "./types";
