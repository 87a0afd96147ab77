import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";

/**
 * Debian's chromium, from CHROMIUM_PATH or PATH. Missing, the browser test fails naming it (it
 * never skips): `.ci/run` installs it.
 */
export function chromiumPath(): string {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) {
    if (!existsSync(configured)) throw new Error(`CHROMIUM_PATH=${configured} does not exist`);
    return configured;
  }
  const found = spawnSync("sh", ["-c", "command -v chromium"], { encoding: "utf8" }).stdout.trim();
  if (!found)
    throw new Error(
      "chromium is required by the review page's browser test and is not on PATH: apt-get install -y chromium (or set CHROMIUM_PATH)",
    );
  return found;
}

export interface RunningExplore {
  child: ChildProcess;
  url: string;
  port: number;
  token: string;
  stop(): Promise<number | null>;
}

/**
 * Runs the built command line's `explore` and waits for the address it prints; `wrapper` runs it
 * through another command, e.g. a shell that sets a limit then `exec "$@"`. `executable` runs
 * bin/access-connectors.js itself, as a user does, with the settings of its `#!` line (through
 * this process's `node`, those are not applied).
 */
export async function startExplore(
  args: string[],
  wrapper: readonly string[] = [],
  { executable = false }: { executable?: boolean } = {},
): Promise<RunningExplore> {
  const program = executable ? [] : [process.execPath];
  const [file, ...rest] = [...wrapper, ...program, "bin/access-connectors.js", "explore", ...args];
  const child = spawn(file as string, rest, {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  let url: string | undefined;
  for await (const line of lines) {
    const match = /(http:\/\/127\.0\.0\.1:\d+\/#token=\S+)/.exec(line);
    if (match) {
      url = match[1];
      break;
    }
  }
  if (!url) throw new Error(`explore printed no address; stderr: ${stderr}`);
  const parsed = new URL(url);
  return {
    child,
    url,
    port: Number(parsed.port),
    token: parsed.hash.replace(/^#token=/, ""),
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill("SIGTERM");
      const [code] = await once(child, "exit");
      return code as number | null;
    },
  };
}
