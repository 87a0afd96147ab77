import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { beforeAll, describe, test } from "vitest";
import { startBlacklineSimulator } from "../../lib/simulators/blackline";
import { startValimailSimulator } from "../../lib/simulators/valimail";
import packageJson from "../../package.json" with { type: "json" };
import { makeTempDir } from "../helpers/tempDir";
import { valimailEnv } from "../helpers/valimail";
import { scenario, waitFor } from "./harness";

/** What scripts/container-build.mjs writes beside the image's filesystem. */
interface ImageConfig {
  tags: string[];
  from: string;
  labels: Record<string, string>;
  env: Record<string, string>;
  user: string;
  volumes: string[];
  healthcheck: string[];
  entrypoint: string[];
  cmd: string[];
}

let out = "";
let image: ImageConfig;

// The Dockerfile's steps, carried out without Docker (npm ci from the local cache): about 20 s.
beforeAll(async () => {
  out = join(await makeTempDir("ac-container-"), "image");
  const build = spawnSync(process.execPath, ["scripts/container-build.mjs", out], {
    env: { ...process.env, npm_config_prefer_offline: "true" },
    encoding: "utf8",
  });
  if (build.status !== 0)
    throw new Error(`container build failed:\n${build.stdout}\n${build.stderr}`);
  image = JSON.parse(await readFile(join(out, "image.json"), "utf8")) as ImageConfig;
}, 240_000);

/** Every package installed below `dir` (scoped ones as `@scope/name`), nested ones included. */
async function installedPackages(dir: string): Promise<string[]> {
  const found = new Set<string>();
  const walk = async (modules: string) => {
    for (const entry of await readdir(modules, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
      const names = entry.name.startsWith("@")
        ? (await readdir(join(modules, entry.name))).map((name) => `${entry.name}/${name}`)
        : [entry.name];
      for (const name of names) {
        found.add(name);
        const nested = join(modules, name, "node_modules");
        if (existsSync(nested)) await walk(nested);
      }
    }
  };
  await walk(dir);
  return [...found].sort();
}

/** The start script runs `node` from PATH: the Node.js running these tests. */
const nodeFirst = () => `${dirname(process.execPath)}:${process.env.PATH ?? ""}`;

describe.concurrent("the container image, built by the Dockerfile's steps without Docker", () => {
  test("holds the built service and production dependencies only, runs as a non-root user, and is tagged latest and the version", async ({
    expect,
  }) => {
    expect(image).toMatchObject({
      tags: ["access-connectors:latest", `access-connectors:${packageJson.version}`],
      from: "node:22-slim",
      user: "node",
      volumes: ["/var/lib/access-connectors"],
      entrypoint: ["/app/bin/access-connectors.js", "service"],
      cmd: [],
      env: {
        NODE_ENV: "production",
        CONNECTOR_STATE_DIR: "/var/lib/access-connectors",
        CONNECTOR_HTTP_HOST: "0.0.0.0",
        CONNECTOR_HTTP_PORT: "9090",
      },
    });
    expect(image.labels["org.opencontainers.image.version"]).toBe(packageJson.version);
    const app = join(out, "app");
    expect(existsSync(join(app, "dist", "cli.js"))).toBe(true);
    for (const source of ["lib", "test", "functions", "scripts", "package-lock.json"]) {
      expect(existsSync(join(app, source)), source).toBe(false);
    }
    for (const dependency of Object.keys(packageJson.dependencies)) {
      expect(existsSync(join(app, "node_modules", dependency)), dependency).toBe(true);
    }
    // Exactly the production tree of the checkout's lockfile: no development tool came along.
    const production = spawnSync("npm", ["ls", "--omit=dev", "--all", "--parseable"], {
      encoding: "utf8",
    });
    const expected = production.stdout
      .split("\n")
      .map((path) => /node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(path)?.[1])
      .filter((name): name is string => name !== undefined);
    expect(await installedPackages(join(app, "node_modules"))).toEqual(
      [...new Set(expected)].sort(),
    );
    expect(expected).not.toContain("vitest");
  });

  test("starts as the image would: the connector as the argument, the state in the image's volume, healthy by its HEALTHCHECK (GET /livez, else the health file), SIGTERM exits 0", async (context) => {
    const { expect } = context;
    const { platform, start, closeLater } = await scenario(context);
    const upstream = await startBlacklineSimulator({ size: { users: 60, teams: 4, roles: 3 } });
    closeLater(() => upstream.close());
    // Any free port on loopback, not the image's 9090 on every interface (tests run at once).
    const service = start(
      ["blackline"],
      {
        ...upstream.env(),
        PATH: nodeFirst(),
        CONNECTOR_STATE_DIR: undefined,
        HOME: undefined,
        CONNECTOR_HTTP_PORT: "0",
        CONNECTOR_HTTP_HOST: "127.0.0.1",
      },
      [join(out, "start.sh")],
    );

    await waitFor("the sync's upload", () => platform.uploads.size === 1);
    await waitFor("the connected label", () => platform.labels.at(-1)?.label === "connected");
    const volume = join(out, "var", "lib", "access-connectors");
    await waitFor("the health file in the volume", () => existsSync(join(volume, "health.json")));
    const [probe, ...probeArgs] = image.healthcheck;
    expect(probe).toBe("node");
    // The probe as Docker runs it: in the container's environment (the image's 0.0.0.0, the port).
    const { port } = new URL(String(service.logged("service started")[0]?.monitoringUrl));
    const byHttp = { CONNECTOR_HTTP_HOST: "0.0.0.0", CONNECTOR_HTTP_PORT: port };
    const healthy = spawnSync(process.execPath, probeArgs, { env: byHttp, encoding: "utf8" });
    expect(healthy.status, healthy.stderr).toBe(0);
    // Without a port, the health file.
    const byFile = spawnSync(process.execPath, probeArgs, {
      env: { CONNECTOR_STATE_DIR: volume },
      encoding: "utf8",
    });
    expect(byFile.status, byFile.stderr).toBe(0);
    expect(existsSync(join(volume, "state.json"))).toBe(true);
    // The entrypoint is the executable, so its #! line's memory settings hold, and the shells
    // and env exec their way to node: the process Docker signals is node itself.
    const pid = service.child.pid;
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    expect(cmdline).toEqual(
      expect.arrayContaining(["--max-semi-space-size=4", "--heap-growing-percent=30"]),
    );
    expect(readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")).toEqual(
      expect.arrayContaining(["MALLOC_ARENA_MAX=2", "MALLOC_MMAP_THRESHOLD_=131072"]),
    );

    const stop = await service.stop("SIGTERM");
    expect(stop.code).toBe(0);
    expect(stop.ms).toBeLessThan(10_000);
    expect(spawnSync(process.execPath, probeArgs, { env: byHttp }).status).toBe(1);
    expect(service.strayLines).toEqual([]);
    expect(service.lines[0]).toMatchObject({
      message: "service started",
      service: "access-connectors",
    });
    // The same probe fails once the file is stale (a hung or dead process) or missing.
    const stale = await makeTempDir("ac-stale-");
    await writeFile(
      join(stale, "health.json"),
      JSON.stringify({ staleAfter: "2020-01-01T00:00:00Z" }),
    );
    for (const dir of [stale, join(stale, "missing")]) {
      const probed = spawnSync(process.execPath, probeArgs, { env: { CONNECTOR_STATE_DIR: dir } });
      expect(probed.status).toBe(1);
    }
  });

  test("takes the connector from CONNECTOR_NAME when no argument is given", async (context) => {
    const { expect } = context;
    const { platform, stateDir, start, closeLater } = await scenario(context);
    const upstream = await startValimailSimulator({ users: 30 });
    closeLater(() => upstream.close());
    const service = start(
      [],
      {
        ...valimailEnv(upstream),
        CONNECTOR_NAME: "valimail",
        PATH: nodeFirst(),
        CONNECTOR_STATE_DIR: stateDir,
        CONNECTOR_HTTP_PORT: "0",
      },
      [join(out, "start.sh")],
    );
    await waitFor("the sync's upload", () => platform.uploads.size === 1);
    expect(platform.hellos[0]).toMatchObject({ connector: "valimail", capabilities: ["sync"] });
    expect((await service.stop("SIGINT")).code).toBe(0);
  });
});
