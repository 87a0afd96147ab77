import { describe, expect, it } from "vitest";
import { readRepositoryFile } from "./repositoryFiles";

/**
 * The two pages a newcomer opens first stay short enough to read (issue 38): the README a page
 * with links into docs/, BENCHMARKS.md the tables and how they were measured (history is in git).
 */
const LIMITS = { "README.md": 300, "BENCHMARKS.md": 250 } as const;

describe("page sizes", () => {
  for (const [page, limit] of Object.entries(LIMITS)) {
    it(`${page} has at most ${limit} lines`, () => {
      const lines = readRepositoryFile(page).trimEnd().split("\n").length;
      expect(lines).toBeLessThanOrEqual(limit);
    });
  }
});
