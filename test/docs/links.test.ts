import { existsSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { anchorsOf, linkTargets, proseLines } from "./markdown";
import { ROOT, readRepositoryFile, repositoryFiles } from "./repositoryFiles";

/**
 * The repository stands alone: every document it cites is in it. Two kinds of citation are
 * checked: a relative Markdown link (with its `#anchor`, when it names a heading of a Markdown
 * file), and a document named in any file's text, a comment included: a path ending in `.md`
 * (`docs/cloud.md`, `lib/simulators/README.md`) or an upper-case name (`BENCHMARKS.md`), found
 * from the repository's root or from the citing file's directory (what a build writes under
 * `.build/` aside). And a Markdown page's code spans that name a source path (`lib/http`) name one
 * that exists, so the docs follow the code when it moves.
 */
const THIS_FILE = "test/docs/links.test.ts"; // its examples cite missing documents on purpose
const files = repositoryFiles();
const markdownFiles = files.filter((file) => file.endsWith(".md"));

const exists = (path: string) => existsSync(join(ROOT, path));

function anchorsIn(path: string): Set<string> {
  return anchorsOf(readRepositoryFile(path));
}

/** The problem with one link of `file`, or undefined when it resolves. */
function brokenLink(file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto:
  const [pathPart = "", anchor] = target.split("#", 2);
  const path = pathPart === "" ? file : normalize(join(dirname(file), decodeURI(pathPart)));
  if (path.startsWith("..")) return `${target} leaves the repository`;
  if (!exists(path)) return `${target}: no such file`;
  if (anchor !== undefined && path.endsWith(".md") && !anchorsIn(path).has(anchor)) {
    return `${target}: ${path} has no heading with the anchor #${anchor}`;
  }
  return undefined;
}

/** Documents named in a text: `.md` paths and names, not inside a Markdown link's target. */
function citedDocuments(text: string): string[] {
  const withoutLinks = text.replace(/\]\([^)]*\)/g, "]");
  return [
    ...withoutLinks.matchAll(/(?<![\w./-])((?:[\w.-]+\/)+[\w.-]+\.md|[A-Z][A-Z0-9_-]*\.md)\b/g),
  ]
    .map((match) => match[1] as string)
    .filter((path) => !path.includes("node_modules/") && !path.startsWith(".build/"));
}

function missingDocument(file: string, cited: string): boolean {
  return !exists(cited) && !exists(join(dirname(file), cited));
}

/** Paths into the repository's source that a Markdown line names in code spans (`lib/http`). */
function sourcePaths(line: string): string[] {
  return [
    ...line.matchAll(/`((?:lib|test|bench|scripts|infra|functions|bin)\/[^`\s<>*{}]*)`/g),
  ].map((match) => (match[1] as string).replace(/[/.,:;]+$/, ""));
}

describe("documents the repository cites", () => {
  it("finds the repository's files", () => {
    expect(files).toContain("README.md");
    expect(files).toContain("lib/cli/main.ts");
  });

  it("every relative Markdown link resolves, anchors included", () => {
    const broken: string[] = [];
    for (const file of markdownFiles) {
      for (const { line, text } of proseLines(readRepositoryFile(file))) {
        for (const target of linkTargets(text)) {
          const problem = brokenLink(file, target);
          if (problem) broken.push(`${file}:${line}: ${problem}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("every document named in a file, a comment included, is in the repository", () => {
    const missing: string[] = [];
    for (const file of files.filter((name) => name !== THIS_FILE)) {
      readRepositoryFile(file)
        .split("\n")
        .forEach((text, index) => {
          for (const cited of citedDocuments(text)) {
            if (missingDocument(file, cited)) missing.push(`${file}:${index + 1}: ${cited}`);
          }
        });
    }
    expect(missing).toEqual([]);
  });

  it("every source path a document names in code is in the repository", () => {
    const missing: string[] = [];
    for (const file of markdownFiles) {
      for (const { line, text } of proseLines(readRepositoryFile(file))) {
        for (const path of sourcePaths(text)) {
          if (!exists(path) && !exists(join(dirname(file), path))) {
            missing.push(`${file}:${line}: ${path}`);
          }
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it("catches a citation of a document that is missing, and a broken anchor", () => {
    expect(citedDocuments("// the promise (docs/nowhere.md section 2; SHARED.md)")).toEqual([
      "docs/nowhere.md",
      "SHARED.md",
    ]);
    expect(missingDocument("lib/cli/main.ts", "docs/nowhere.md")).toBe(true);
    expect(missingDocument("lib/simulators/faults.ts", "README.md")).toBe(false);
    expect(brokenLink("README.md", "docs/cloud.md#no-such-heading")).toMatch(/no heading/);
    expect(brokenLink("README.md", "docs/cloud.md#dashboard")).toBeUndefined();
    expect(brokenLink("docs/README.md", "../nowhere.md")).toMatch(/no such file/);
    expect(
      sourcePaths("the writer (`lib/snapshot/records.ts`), `lib/<name>/x.ts`, `lib/http`"),
    ).toEqual(["lib/snapshot/records.ts", "lib/http"]);
  });
});
