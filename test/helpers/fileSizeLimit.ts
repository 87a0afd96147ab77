import { execFile } from "node:child_process";
import { promisify } from "node:util";

/**
 * Runs a Node script under a file size limit (sh's `ulimit -f`, in blocks of 512 bytes): a write
 * past it fails with EFBIG, as a full /tmp or disk makes a real write fail. Returns its stdout.
 */
export async function runUnderFileSizeLimit(script: string, blocks: number): Promise<string> {
  const { stdout } = await promisify(execFile)(
    "/bin/sh",
    ["-c", `ulimit -f ${blocks} && exec "$@"`, "sh", process.execPath, script],
    { timeout: 60_000 },
  );
  return stdout;
}
