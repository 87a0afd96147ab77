import type { Logger } from "../logging";
import { redact } from "../redact";
import { SERVICE_NAME } from "./constants";

export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A logger that can add fields to every line of a part of the work (a sync, a task). */
export interface JsonLogger extends Logger {
  child(fields: Record<string, unknown>): JsonLogger;
}

export interface JsonLoggerOptions {
  /** Receives one line at a time, newline included. */
  write: (line: string) => unknown;
  /** Lines below this level are dropped; default `info`. */
  level?: LogLevel;
  /** Fields on every line, e.g. `connector` and `hostId`. */
  fields?: Record<string, unknown>;
  now?: () => Date;
}

/** The keys every line starts with; a field of the same name cannot replace them. */
const RESERVED = new Set(["level", "message", "timestamp", "service"]);

/**
 * JSON Lines on one stream, one line an event, with the field names of the Lambdas' Powertools
 * Logger (`level` in capitals, `message`, `timestamp`, `service`, then the correlation fields such
 * as `syncId` and `connectorId`). Every line is redacted as a whole before it is written.
 */
export function createJsonLogger(options: JsonLoggerOptions): JsonLogger {
  const threshold = LOG_LEVELS.indexOf(options.level ?? "info");
  const now = options.now ?? (() => new Date());
  const persistent = options.fields ?? {};

  const line = (level: LogLevel, message: string, fields?: Record<string, unknown>) => {
    if (LOG_LEVELS.indexOf(level) < threshold) return;
    const entry: Record<string, unknown> = {
      level: level.toUpperCase(),
      message,
      timestamp: now().toISOString(),
      service: SERVICE_NAME,
    };
    for (const [key, value] of Object.entries({ ...persistent, ...fields })) {
      if (!RESERVED.has(key) && value !== undefined) entry[key] = value;
    }
    options.write(`${redact(JSON.stringify(entry, serializeErrors))}\n`);
  };

  return {
    debug: (message, fields) => line("debug", message, fields),
    info: (message, fields) => line("info", message, fields),
    warn: (message, fields) => line("warn", message, fields),
    error: (message, fields) => line("error", message, fields),
    child: (fields) => createJsonLogger({ ...options, fields: { ...persistent, ...fields } }),
  };
}

/** An error as its name, message and narrow code: never its stack's locals or a request. */
function serializeErrors(_key: string, value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  const code = (value as { code?: unknown }).code;
  return { name: value.name, message: value.message, ...(code === undefined ? {} : { code }) };
}

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}
