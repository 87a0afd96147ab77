import { type ChildProcess, spawn } from "node:child_process";
import { readdir, readFile, stat } from "node:fs/promises";
import { createServer, type Socket, connect as tcpConnect } from "node:net";
import { join } from "node:path";
import type { TestContext } from "vitest";
import type { HealthReport } from "../../lib/service";
import { type PlatformSimulator, startPlatformSimulator } from "../../lib/simulators/platform";
import { makeTempDir } from "../helpers/tempDir";

/** One line of the service's stdout: the Powertools Logger's fields, then the event's own. */
export interface LogLine {
  level: string;
  message: string;
  timestamp: string;
  service: string;
  [field: string]: unknown;
}

/** The built executable, as the container runs it: `node bin/access-connectors.js service ...`. */
export class ServiceProcess {
  readonly child: ChildProcess;
  readonly lines: LogLine[] = [];
  /** Stdout lines that are not JSON log lines (there should be none). */
  readonly strayLines: string[] = [];
  stdout = "";
  stderr = "";
  /** The exit, once stdout and stderr are read to their end; `at`, when the process exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;

  /** `command` is what runs the service; by default the checkout's built executable. */
  constructor(
    args: readonly string[],
    env: Record<string, string>,
    command: readonly string[] = [process.execPath, "bin/access-connectors.js", "service"],
  ) {
    const [file = process.execPath, ...leading] = command;
    this.child = spawn(file, [...leading, ...args], {
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let partial = "";
    this.child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      this.stdout += chunk;
      const parts = (partial + chunk).split("\n");
      partial = parts.pop() ?? "";
      for (const part of parts) this.#parse(part);
    });
    this.child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve, reject) => {
      this.child.on("error", reject);
      // Dated at the exit, settled at "close": stdout and stderr can still be read after "exit"
      // (a configuration error's message was not in `stderr` yet, once in a CI run).
      let exitedAt = 0;
      this.child.on("exit", () => {
        exitedAt = Date.now();
      });
      this.child.on("close", (code, signal) =>
        resolve({ code, signal, at: exitedAt || Date.now() }),
      );
    });
  }

  #parse(text: string): void {
    try {
      const line = JSON.parse(text) as LogLine;
      if (typeof line.level === "string" && typeof line.message === "string") {
        this.lines.push(line);
        return;
      }
    } catch {
      // not JSON: kept below
    }
    this.strayLines.push(text);
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  logged(message: string): LogLine[] {
    return this.lines.filter((line) => line.message === message);
  }

  /** Sends the signal and waits for the exit; `ms` is how long the exit took. */
  async stop(signal: NodeJS.Signals = "SIGTERM") {
    const sentAt = Date.now();
    this.child.kill(signal);
    const exit = await this.exited;
    return { ...exit, ms: exit.at - sentAt };
  }
}

/** Polls `check` until it returns something truthy; fails naming `what` after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * What a scenario runs against: a platform simulator (polling every second), a state directory,
 * and children started with `start`; all closed or killed when the test ends.
 */
export async function scenario(
  context: TestContext,
  options: { pollIntervalSeconds?: number } = {},
) {
  const platform = await startPlatformSimulator({
    pollIntervalSeconds: options.pollIntervalSeconds ?? 1,
  });
  const stateDir = await makeTempDir("ac-service-");
  const children: ServiceProcess[] = [];
  const closers: (() => Promise<unknown>)[] = [() => platform.close()];
  context.onTestFinished(async () => {
    for (const child of children) if (child.running) child.child.kill("SIGKILL");
    await Promise.all(closers.map((close) => close()));
  });
  return {
    platform,
    stateDir,
    /** Closed when the test ends. */
    closeLater(close: () => Promise<unknown>) {
      closers.push(close);
    },
    /**
     * Starts the service with the platform's variables, the state directory and `env` (where
     * `undefined` removes a variable), by `command` (default: the checkout's built executable).
     */
    start(
      args: readonly string[],
      env: Record<string, string | undefined>,
      command?: readonly string[],
    ): ServiceProcess {
      const merged = {
        ...platform.env("host-1"),
        HOME: stateDir,
        CONNECTOR_STATE_DIR: stateDir,
        ...env,
      };
      const defined = Object.entries(merged).filter(
        (entry): entry is [string, string] => entry[1] !== undefined,
      );
      const child = new ServiceProcess(args, Object.fromEntries(defined), command);
      children.push(child);
      return child;
    },
    health: async (): Promise<HealthReport> =>
      JSON.parse(await readFile(join(stateDir, "health.json"), "utf8")) as HealthReport,
  };
}

/** Every file below `dir` (relative paths), for the checks that no temporary file is left. */
export async function filesBelow(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (relative: string) => {
    let entries: string[];
    try {
      entries = await readdir(join(dir, relative));
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(relative, entry);
      if ((await stat(join(dir, path))).isDirectory()) await walk(path);
      else found.push(path);
    }
  };
  await walk("");
  return found.sort();
}

/** A free loopback port: nothing listens on it when this returns. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return address.port;
}

/** Forwards connections on `port` to `target`'s port: how a platform that was down comes back. */
export async function forwardPort(
  port: number,
  target: PlatformSimulator,
): Promise<{ close(): Promise<void> }> {
  const targetPort = Number(new URL(target.url).port);
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    const upstream = tcpConnect(targetPort, "127.0.0.1");
    for (const end of [socket, upstream]) {
      sockets.add(end);
      end.on("close", () => sockets.delete(end));
      end.on("error", () => {
        socket.destroy();
        upstream.destroy();
      });
    }
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
