// The AWS test harness: moto_server on loopback, the packaged stack deployed to it, and the
// packaged handlers run the way Lambda runs them. See stack.ts, lambda.ts and sqs.ts.
export {
  type AwsRequestCounter,
  type AwsRequestCounterOptions,
  type AwsRequestCounts,
  startAwsRequestCounter,
} from "./awsRequests";
export { LambdaInvocationError, LambdaKilledError } from "./lambda";
export {
  alarmMetric,
  deployedDashboard,
  emittedMetrics,
  graphedMetrics,
  type MetricRef,
  metricKey,
} from "./metrics";
export {
  awsClientConfig,
  awsEnv,
  createPkSkTable,
  DEFAULT_REGION,
  type Moto,
  startMoto,
  startMotoWithPkSkTable,
} from "./moto";
export { runOperator } from "./operator";
export { ensurePackaged } from "./package";
export {
  type DeployedFunction,
  type DeployOptions,
  type DrainOptions,
  type DrainStats,
  deployStack,
  type FunctionConfig,
  type InvokeOptions,
  type LogLine,
  type QueueMapping,
  type Stack,
  type StackOnMoto,
  startStackOnMoto,
} from "./stack";
