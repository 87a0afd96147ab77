import type { Logger } from "../logging";
import { redact } from "../redact";
import type { CliIo } from "./io";

/** Log lines on stderr, redacted; debug lines only with `--verbose`. */
export function createCliLogger(io: CliIo, verbose: boolean): Logger {
  const line = (level: string, message: string, fields?: Record<string, unknown>) => {
    const detail = fields && Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : "";
    io.stderr.write(`${redact(`${level}: ${message}${detail}`)}\n`);
  };
  return {
    debug: (message, fields) => {
      if (verbose) line("debug", message, fields);
    },
    info: (message, fields) => line("info", message, fields),
    warn: (message, fields) => line("warn", message, fields),
    error: (message, fields) => line("error", message, fields),
  };
}
