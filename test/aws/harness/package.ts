// Packaging for the AWS tests: what `serverless package` does (bundle the functions, then
// package), into .build/serverless/<stage>-<region>/, so a test never deploys a
// template packaged for another stage and never touches the operator's .serverless/.
// Done at most once per change of its inputs: a stamp with the hash of the sources is kept next
// to the output, and a lock makes parallel test processes wait for one packager.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { cp, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { DEFAULT_REGION } from "./moto";

const run = promisify(execFile);

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
export const FUNCTIONS_DIR = join(ROOT, ".build", "functions");

/** What a package depends on: sources, infra, the packager, and the locked dependencies. */
const INPUT_DIRS = ["lib", "functions", "infra"];
const INPUT_FILES = [
  "serverless.yml",
  "scripts/package-functions.mjs",
  "package.json",
  "package-lock.json",
  "tsconfig.json",
];

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

export async function inputsHash(): Promise<string> {
  const hash = createHash("sha256");
  const files = [
    ...(await Promise.all(INPUT_DIRS.map((d) => listFiles(join(ROOT, d))))).flat(),
    ...INPUT_FILES.map((f) => join(ROOT, f)),
  ];
  for (const file of files) {
    hash.update(relative(ROOT, file)).update("\0");
    hash.update(await readFile(file).catch(() => Buffer.from("(missing)"))).update("\0");
  }
  return hash.digest("hex");
}

async function readStamp(file: string): Promise<string | undefined> {
  return readFile(file, "utf8").then(
    (s) => s.trim(),
    () => undefined,
  );
}

const LOCK = join(ROOT, ".build", "package.lock");

/** A lock directory holding the owner's pid; a dead owner's lock is taken over. */
async function withLock<T>(fn: () => Promise<T>): Promise<T> {
  await mkdir(dirname(LOCK), { recursive: true });
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      await mkdir(LOCK);
      await writeFile(join(LOCK, "pid"), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const owner = Number(await readStamp(join(LOCK, "pid")));
      let alive = true;
      if (owner > 0) {
        try {
          process.kill(owner, 0);
        } catch {
          alive = false;
        }
      } else {
        // Taken a moment ago and the pid not written yet, or left empty by a crash.
        const age =
          Date.now() -
          (await stat(LOCK).then(
            (s) => s.mtimeMs,
            () => Date.now(),
          ));
        alive = age < 10_000;
      }
      if (!alive) await rm(LOCK, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`packaging lock ${LOCK} held too long`);
      else await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    return await fn();
  } finally {
    await rm(LOCK, { recursive: true, force: true });
  }
}

async function node(
  args: string[],
  what: string,
  cwd = ROOT,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  try {
    await run(process.execPath, args, { cwd, env, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${what} failed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`.trim());
  }
}

export interface PackageDir {
  /** Holds cloudformation-template-{create,update}-stack.json. */
  dir: string;
  /** Where the function zips are (.build/functions). */
  functionsDir: string;
  /** Whether this call packaged (false: the stamp said the output was current). */
  packaged: boolean;
  ms: number;
}

/**
 * Makes sure the functions are bundled and the stack packaged for `stage` and `region` from the
 * current sources, and returns where. Cheap when nothing changed (hashes the inputs).
 */
export async function ensurePackaged(stage = "dev", region = DEFAULT_REGION): Promise<PackageDir> {
  const started = performance.now();
  const dir = join(ROOT, ".build", "serverless", `${stage}-${region}`);
  return withLock(async () => {
    const hash = await inputsHash();
    const functionsStamp = join(FUNCTIONS_DIR, "inputs.sha256");
    const stackStamp = join(dir, "inputs.sha256");
    // The stamps also name the zips they were made with (the manifest holds their sha256), so
    // zips rebuilt meanwhile by `npm run package` from other sources are not taken as current.
    const manifest = () =>
      readFile(join(FUNCTIONS_DIR, "manifest.json")).then(
        (m) => createHash("sha256").update(m).digest("hex"),
        () => "none",
      );
    let packaged = false;
    if ((await readStamp(functionsStamp)) !== `${hash} ${await manifest()}`) {
      await rm(functionsStamp, { force: true });
      await node([join(ROOT, "scripts", "package-functions.mjs"), "--quiet"], "bundling functions");
      await writeFile(functionsStamp, `${hash} ${await manifest()}\n`);
      packaged = true;
    }
    const stackKey = `${hash} ${await manifest()}`;
    if ((await readStamp(stackStamp)) !== stackKey) {
      await rm(dir, { recursive: true, force: true });
      // osls empties <service dir>/.serverless whenever it packages, wherever --package points:
      // package from a copy of the service so an operator's .serverless/ is left alone.
      const service = join(ROOT, ".build", "service", `${stage}-${region}`);
      await rm(service, { recursive: true, force: true });
      await mkdir(join(service, ".build"), { recursive: true });
      await cp(join(ROOT, "serverless.yml"), join(service, "serverless.yml"));
      await cp(join(ROOT, "infra"), join(service, "infra"), { recursive: true });
      await symlink(FUNCTIONS_DIR, join(service, ".build", "functions"), "dir");
      await node(
        [
          join(ROOT, "node_modules", "osls", "bin", "serverless.js"),
          "package",
          "--stage",
          stage,
          "--region",
          region,
          "--package",
          dir,
        ],
        `serverless package --stage ${stage} --region ${region}`,
        service,
        // Bundled above, under the lock; the plugin would bundle the same sources again while
        // other tests read the zips (test/aws/template.test.ts checks the plugin's own bundling).
        { ...process.env, ACCESS_CONNECTORS_PREBUNDLED: "1" },
      );
      await writeFile(stackStamp, `${stackKey}\n`);
      packaged = true;
    }
    return {
      dir,
      functionsDir: FUNCTIONS_DIR,
      packaged,
      ms: Math.round(performance.now() - started),
    };
  });
}
