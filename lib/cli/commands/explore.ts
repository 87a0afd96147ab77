import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import * as z from "zod";
import { UsageError } from "../../errors";
import {
  indexPathOf,
  loadAssets,
  openExplore,
  reviewPathOf,
  startExploreServer,
} from "../../explore";
import { removeTempFiles, SIGNAL_EXIT_CODES } from "../../snapshot/tempFiles";
import type { CliIo } from "../io";

export interface ExploreOptions {
  diff?: string;
  port?: string;
}

const portOption = z.coerce.number().int().min(0).max(65535);

/** The front end's bundle, beside the command line's (dist/explore, built by `npm run build`). */
const ASSETS_DIR = fileURLToPath(new URL("./explore/", import.meta.url));

const STOP_SIGNALS = ["SIGTERM", "SIGINT"] as const;

/**
 * `explore SNAPSHOT [--diff OLD] [--port N]`: indexes the snapshot (and OLD) into a file beside it,
 * or reads the index an earlier start left there, serves the review
 * page on 127.0.0.1 behind a fresh token, prints the address, and runs until SIGINT or SIGTERM,
 * then writes any pending review decision and exits 0.
 */
export async function exploreCommand(
  io: CliIo,
  snapshot: string,
  options: ExploreOptions,
): Promise<number> {
  const port = portOption.safeParse(options.port ?? "0");
  if (!port.success)
    throw new UsageError(
      `--port: give a port number from 0 to 65535 (0: any free port), not "${options.port}"`,
    );
  const began = performance.now();
  const { explore, routes } = await whileStarting(() => openExplore(snapshot, options.diff));
  const seconds = ((performance.now() - began) / 1000).toFixed(1);
  const { index } = explore;
  const how = index.reused ? "read the index of" : "indexed";
  io.stderr.write(
    `${how} ${index.accounts.length} accounts, ${index.entitlements.length} entitlements and ${index.grantCount} grants in ${seconds} s (${indexPathOf(snapshot)}); review decisions go to ${reviewPathOf(snapshot)}\n`,
  );
  const assets = await loadAssets(ASSETS_DIR);
  const server = await startExploreServer({ routes, assets, port: port.data });
  io.stdout.write(
    `Review page (this machine only; the address holds its key, share it with no one):\n  ${server.url}\nStop with Ctrl-C.\n`,
  );
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    const stop = (received: NodeJS.Signals) => {
      for (const s of STOP_SIGNALS) process.off(s, stop);
      resolve(received);
    };
    for (const s of STOP_SIGNALS) process.on(s, stop);
  });
  await server.close();
  await explore.review.flushed();
  io.stderr.write(`${signal}: stopped\n`);
  return 0;
}

/**
 * Until the page serves, SIGINT or SIGTERM ends the start at once (exit 130 or 143), removing an
 * index file being written (`SNAPSHOT.explore-index.PID.tmp`); once it serves, they stop it.
 */
async function whileStarting<T>(start: () => Promise<T>): Promise<T> {
  const end = (signal: NodeJS.Signals) => {
    removeTempFiles();
    process.exit(SIGNAL_EXIT_CODES[signal as keyof typeof SIGNAL_EXIT_CODES]);
  };
  for (const s of STOP_SIGNALS) process.on(s, end);
  try {
    return await start();
  } finally {
    for (const s of STOP_SIGNALS) process.off(s, end);
  }
}

/** Adds `explore` to the command line. */
export function addExploreCommand(
  program: Command,
  io: CliIo,
  setExitCode: (code: number) => void,
) {
  program
    .command("explore")
    .description("review a snapshot in the browser: a page on 127.0.0.1 behind a token")
    .argument("<snapshot>", "a complete snapshot a sync wrote (plain or .gz)")
    .option(
      "--diff <old>",
      "an older snapshot of the same connector: show what was added and removed",
    )
    .option("--port <port>", "the port to listen on (default: any free port)")
    .action(async (snapshot: string, options: ExploreOptions) => {
      setExitCode(await exploreCommand(io, snapshot, options));
    });
}
