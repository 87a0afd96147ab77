/** Child processes of the benchmark: a simulator host, and a command run to its end. */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import type { SimulatorSpec } from "./scenarios";
import type { SimulatorReady, SimulatorStats } from "./simulatorHost";

export interface HostedSimulator {
  ready: SimulatorReady;
  /** Ends the simulator's process and returns what it counted. */
  stop(): Promise<SimulatorStats>;
}

/** Starts `simulatorHost` (bundled beside this file) in a process of its own. */
export async function startHostedSimulator(
  hostScript: string,
  spec: SimulatorSpec,
): Promise<HostedSimulator> {
  const child = spawn(process.execPath, [hostScript, JSON.stringify(spec)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done)
    throw new Error(`the simulator host exited before it was ready (${spec.connector})`);
  const ready = JSON.parse(first.value) as SimulatorReady;
  return {
    ready,
    async stop() {
      child.stdin.end();
      const last = await lines.next();
      await exited(child);
      if (last.done) throw new Error("the simulator host exited without its stats");
      return JSON.parse(last.value) as SimulatorStats;
    },
  };
}

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
  wallMs: number;
}

/** Runs `command` to its end (killed after `timeoutMs`), with its output captured. */
export async function runToEnd(
  command: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string; timeoutMs: number },
): Promise<Finished> {
  const started = performance.now();
  const child = spawn(command, args, {
    env: options.env,
    cwd: options.cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (text: string) => (stdout += text));
  child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
  try {
    const code = await exited(child);
    return { code, stdout, stderr, wallMs: performance.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

async function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  // "close": the process has ended and its output has been read to the end.
  const [code] = (await once(child, "close")) as [number | null];
  return code;
}
