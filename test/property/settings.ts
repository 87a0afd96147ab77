import fc from "fast-check";
import { expect } from "vitest";
import {
  ConfigError,
  ConnectorError,
  CredentialsRejectedError,
  UsageError,
} from "../../lib/errors";

/**
 * Every property runs from one fixed seed, so a run is repeatable: `PROPERTY_SEED=<n>` replays
 * another. On failure fast-check's message starts with the seed and the path of the shrunk
 * counterexample (`{ seed: ..., path: ... }`); give both back to `fc.assert` to replay just it.
 * Run counts are bounded so the whole property suite stays within seconds.
 */
export const PROPERTY_SEED = Number(process.env.PROPERTY_SEED ?? 20_261_123);

fc.configureGlobal({ seed: PROPERTY_SEED, numRuns: 150, endOnFailure: true });

/** Runs of a property that starts servers or syncs: fewer, each bounded in time (a hang fails). */
export const IO_RUNS = { numRuns: 40, timeout: 10_000 } as const;

/** Text that tends to break parsers, paths and addresses. */
export const HOSTILE_TEXT = [
  "",
  " ",
  "\t",
  "\n",
  "\u0000",
  "\u001b[31m",
  ".",
  "..",
  "../..",
  "%2e%2e",
  "/",
  "//evil.example.com",
  "\\..\\",
  "?x=1",
  "#frag",
  "@evil.example.com",
  "http://evil.example.com",
  "https://evil.example.com/path",
  "http://127.0.0.1:1",
  "https://user:pw@host.example.com",
  "é",
  "\u2028",
  "\ud800",
  "0",
  "-1",
  "1e3",
  "0x10",
  "NaN",
  "Infinity",
  "9007199254740993",
  "true",
  "null",
  "undefined",
  "__proto__",
  "constructor",
  "x".repeat(5000),
] as const;

export const hostileText = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_TEXT) },
  { weight: 2, arbitrary: fc.string() },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.webUrl() },
  { weight: 1, arbitrary: fc.integer().map(String) },
);

/**
 * A configuration loader's outcome: a value, or a `ConfigError` whose every issue names one of
 * `variables` (or its `_FILE` form) with a message, or (where allowed) `CredentialsRejectedError`
 * or `UsageError` with a message naming what to fix. Anything else (a TypeError, a bare Error)
 * fails the property.
 */
export function expectConfigOutcome<T>(
  load: () => T,
  variables: readonly string[],
  allowed: { credentials?: RegExp; usage?: boolean } = {},
): T | undefined {
  try {
    return load();
  } catch (error) {
    if (error instanceof ConfigError) {
      expect(error.issues.length).toBeGreaterThan(0);
      for (const issue of error.issues) {
        const named = variables.includes(issue.variable)
          ? issue.variable
          : issue.variable.replace(/_FILE$/, "");
        expect(variables).toContain(named);
        expect(issue.message.trim().length).toBeGreaterThan(0);
        expect(error.message).toContain(issue.variable);
      }
      return undefined;
    }
    if (allowed.credentials && error instanceof CredentialsRejectedError) {
      expect(error.message).toMatch(allowed.credentials);
      return undefined;
    }
    if (allowed.usage && error instanceof UsageError) {
      expect(error.message.length).toBeGreaterThan(0);
      return undefined;
    }
    throw error;
  }
}

/** A typed failure of the project: one of its error classes, with a narrow code and a message. */
export function expectTypedError(error: unknown): asserts error is ConnectorError {
  if (!(error instanceof ConnectorError)) throw error;
  expect(typeof error.code).toBe("string");
  expect(error.code.length).toBeGreaterThan(0);
  expect(error.message.length).toBeGreaterThan(0);
}
