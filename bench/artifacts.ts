/**
 * What a start costs: each Lambda function's bundle (size, and the time a fresh Node process takes
 * to import it) and the command line's start (`--version`). Best of five runs each.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { runToEnd } from "./processes";

const RUNS = 5;

export interface FunctionBundle {
  name: string;
  /** handler.mjs, minified. */
  bundleBytes: number;
  zipBytes: number;
  /** A fresh `node` importing the bundle: the import alone, best of five. */
  coldLoadMs: number;
}

export interface Artifacts {
  functions: FunctionBundle[];
  /** `access-connectors --version`, spawn to exit, best of five. */
  cliStartMs: number;
}

interface ManifestEntry {
  key: string;
  zipped: number;
  handlerBytes: number;
}

async function bestOf(run: () => Promise<number>): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < RUNS; i++) best = Math.min(best, await run());
  return best;
}

async function coldLoad(root: string, bundle: string): Promise<number> {
  const url = pathToFileURL(bundle).href;
  const code = `const t = performance.now(); await import(${JSON.stringify(url)}); process.stdout.write(String(performance.now() - t));`;
  return bestOf(async () => {
    const run = await runToEnd(process.execPath, ["--input-type=module", "-e", code], {
      cwd: root,
      timeoutMs: 60_000,
      // What Lambda's environment always has; a bundle reads the region at import.
      env: { PATH: process.env.PATH, AWS_REGION: "us-east-1", AWS_DEFAULT_REGION: "us-east-1" },
    });
    if (run.code !== 0) throw new Error(`importing ${bundle} failed: ${run.stderr.trim()}`);
    return Number(run.stdout);
  });
}

export async function measureArtifacts(root: string): Promise<Artifacts> {
  const packaged = await runToEnd(process.execPath, ["scripts/package-functions.mjs", "--quiet"], {
    cwd: root,
    env: process.env,
    timeoutMs: 5 * 60_000,
  });
  if (packaged.code !== 0) throw new Error(`packaging failed: ${packaged.stderr.trim()}`);
  const outRoot = join(root, ".build", "functions");
  const manifest = JSON.parse(
    await readFile(join(outRoot, "manifest.json"), "utf8"),
  ) as ManifestEntry[];
  const functions: FunctionBundle[] = [];
  for (const entry of manifest) {
    functions.push({
      name: entry.key,
      bundleBytes: entry.handlerBytes,
      zipBytes: entry.zipped,
      coldLoadMs: await coldLoad(root, join(outRoot, entry.key, "handler.mjs")),
    });
  }
  const bin = join(root, "bin", "access-connectors.js");
  const cliStartMs = await bestOf(async () => {
    const run = await runToEnd(bin, ["--version"], {
      cwd: root,
      env: process.env,
      timeoutMs: 60_000,
    });
    if (run.code !== 0) throw new Error(`access-connectors --version failed: ${run.stderr.trim()}`);
    return run.wallMs;
  });
  return { functions, cliStartMs };
}
