/** The logging surface of the core; the CLI, the service and the Lambdas each supply one. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const ignore = () => {};
export const silentLogger: Logger = { debug: ignore, info: ignore, warn: ignore, error: ignore };

/** A logger that adds `fields` (correlation ids, say) to every line. */
export function withFields(logger: Logger, fields: Record<string, unknown>): Logger {
  const merge = (extra?: Record<string, unknown>) => ({ ...fields, ...extra });
  return {
    debug: (message, extra) => logger.debug(message, merge(extra)),
    info: (message, extra) => logger.info(message, merge(extra)),
    warn: (message, extra) => logger.warn(message, merge(extra)),
    error: (message, extra) => logger.error(message, merge(extra)),
  };
}
