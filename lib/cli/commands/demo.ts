import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { startBlacklineSimulator } from "../../simulators/blackline";
import type { CliIo } from "../io";
import { syncToFile } from "./sync";

export const DEMO_OUTPUT_DIR = "demo-output";

/** Starts the bundled simulators on loopback and runs the main job against them. */
export async function runDemo(
  io: CliIo,
  options: { outDir?: string; json?: boolean },
): Promise<void> {
  const outDir = resolve(options.outDir ?? DEMO_OUTPUT_DIR);
  await mkdir(outDir, { recursive: true });
  const blackline = await startBlacklineSimulator();
  try {
    io.stderr.write(
      `demo: BlackLine simulator on ${blackline.url} (${blackline.tenant.users.length} users, ${blackline.tenant.teams.length} teams, ${blackline.tenant.roles.length} roles)\n`,
    );
    await syncToFile(io, blackline.env(), {
      connector: "blackline",
      out: join(outDir, "blackline.sync.jsonl"),
      json: options.json ?? false,
    });
  } finally {
    await blackline.close();
  }
}
