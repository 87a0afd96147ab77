import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { Tracer } from "@aws-lambda-powertools/tracer";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import type { Context } from "aws-lambda";
import type { Logger as CoreLogger } from "../../logging";
import { redact, redactValue } from "../../redact";
import type { Telemetry } from "../observability";

/**
 * Powertools for every function: a structured JSON logger (service name, cold start, request id,
 * and the correlation ids each handler appends; every message and field redacted), metrics
 * flushed once per invocation (dimensions `service` and `stage`, so that one account's stages
 * stay apart on the dashboard and in the alarms of serverless.yml), and a tracer. One instance of each per process, as Powertools
 * recommends, so a warm function reuses them.
 */
export const logger = new Logger();
export const metrics = new Metrics(
  process.env.STAGE ? { defaultDimensions: { stage: process.env.STAGE } } : {},
);
export const tracer = new Tracer();

const coreLogger: CoreLogger = {
  debug: (message, fields) => logger.debug(redact(message), redactFields(fields)),
  info: (message, fields) => logger.info(redact(message), redactFields(fields)),
  warn: (message, fields) => logger.warn(redact(message), redactFields(fields)),
  error: (message, fields) => logger.error(redact(message), redactFields(fields)),
};

export const telemetry: Telemetry = {
  logger: coreLogger,
  count: (name, value) => {
    if (value > 0) metrics.addMetric(name, MetricUnit.Count, value);
  },
  duration: (name, ms) => metrics.addMetric(name, MetricUnit.Milliseconds, ms),
};

function redactFields(fields: Record<string, unknown> | undefined): Record<string, unknown> {
  return fields ? (redactValue(fields) as Record<string, unknown>) : {};
}

/** Wraps a handler with middy and the three Powertools middlewares. */
export function withPowertools<Event, Result>(
  handler: (event: Event, context: Context) => Promise<Result>,
) {
  return middy(handler)
    .use(captureLambdaHandler(tracer))
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics, { captureColdStartMetric: true }));
}
