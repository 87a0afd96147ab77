import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Directories that hold what is built, installed or generated, never what the repository says. */
const SKIPPED = new Set([
  ".git",
  "node_modules",
  "dist",
  "coverage",
  ".serverless",
  "demo-output",
  ".build",
  ".venv",
]);

/** Files that can cite a document: sources, configuration, documentation. */
const TEXT = /\.(?:md|ts|tsx|mts|js|mjs|cjs|json|ya?ml|sh)$|^Dockerfile$|^run$/;

/** Every text file of the repository, as paths relative to its root (`/`-separated). */
export function repositoryFiles(dir = ROOT): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...repositoryFiles(path));
    else if (entry.isFile() && TEXT.test(entry.name)) {
      files.push(relative(ROOT, path).split("\\").join("/"));
    }
  }
  return files;
}

export function readRepositoryFile(path: string): string {
  return readFileSync(join(ROOT, path), "utf8");
}
