import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { startBlacklineSimulator } from "../../simulators/blackline";
import { startValimailSimulator } from "../../simulators/valimail";
import type { CliIo } from "../io";
import { actionCommand } from "./action";
import { syncToFile } from "./sync";

export const DEMO_OUTPUT_DIR = "demo-output";

/**
 * Starts the bundled simulators on loopback and runs the main jobs against them: a BlackLine
 * sync, a Valimail sync, and one Valimail action (disable_user).
 */
export async function runDemo(
  io: CliIo,
  options: { outDir: string; json?: boolean },
): Promise<number> {
  const outDir = resolve(options.outDir);
  await mkdir(outDir, { recursive: true });
  const [blackline, valimail] = await Promise.all([
    startBlacklineSimulator(),
    startValimailSimulator(),
  ]);
  try {
    const { users, teams, roles } = blackline.tenant;
    io.stderr.write(
      `demo: BlackLine simulator on ${blackline.url} (${users.length} users, ${teams.length} teams, ${roles.length} roles)\n`,
    );
    await syncToFile(io, blackline.env(), {
      connector: "blackline",
      out: join(outDir, "blackline.sync.jsonl"),
      json: options.json ?? false,
    });

    io.stderr.write(
      `demo: Valimail simulator on ${valimail.url} (${valimail.users.size} accounts)\n`,
    );
    const valimailEnv = { ...valimail.env(), CONNECTOR_PROVISIONING: "true" };
    await syncToFile(io, valimailEnv, {
      connector: "valimail",
      out: join(outDir, "valimail.sync.jsonl"),
      json: options.json ?? false,
    });

    const user = [...valimail.users.values()].find((u) => u.active);
    if (!user) throw new Error("the Valimail simulator has no active user to disable");
    io.stderr.write(`demo: valimail action disable_user --user-id ${user.id} (${user.userName})\n`);
    return await actionCommand(io, valimailEnv, {
      connector: "valimail",
      action: "disable_user",
      args: { user_id: user.id },
    });
  } finally {
    await Promise.all([blackline.close(), valimail.close()]);
  }
}
