/**
 * `<NAME>_FILE` secrets: regular files only, bounded, trailing whitespace dropped, one line, and
 * redacted in the form that is sent.
 */
import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveSecrets } from "../../lib/config";
import { ConfigError } from "../../lib/errors";
import { redact } from "../../lib/redact";
import { type BlacklineSimulator, startBlacklineSimulator } from "../../lib/simulators/blackline";
import { cli } from "../helpers/cli";
import { makeTempDir } from "../helpers/tempDir";

const NAME = "CONNECTOR_ACCOUNTING_API_KEY";

function problemOf(env: Record<string, string>): string {
  try {
    resolveSecrets(env, [NAME]);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("no problem reported");
}

describe("secrets read from files", () => {
  it("drops the file's trailing whitespace (spaces, tabs, line breaks), and redacts the value as sent", async () => {
    const file = join(await makeTempDir(), "key");
    await writeFile(file, "  s3cr3t-from-file-91 \t \n\n  \r\n");

    const env = resolveSecrets({ [`${NAME}_FILE`]: file }, [NAME]);

    expect(env[NAME]).toBe("  s3cr3t-from-file-91");
    expect(redact(`sent ${env[NAME]} here`)).toBe("sent [REDACTED] here");
  });

  it("refuses a secret of more than one line, naming the variable and what was found, not the value", async () => {
    const file = join(await makeTempDir(), "key");
    await writeFile(file, "first-half-of-a-key\nsecond-half-of-a-key\n\n");

    const problem = problemOf({ [`${NAME}_FILE`]: file });
    expect(problem).toBe(
      `${NAME}_FILE: ${file} holds 2 lines of text; a secret is one line: leave only the value in it`,
    );
    expect(problemOf({ [NAME]: "key-given-\r\ndirectly" })).toBe(
      `${NAME}: the value holds 2 lines of text; a secret is one line: set only the value`,
    );
    expect(problem).not.toMatch(/half-of-a-key/);
  });

  it("refuses a file that holds only whitespace, naming the file variable", async () => {
    const file = join(await makeTempDir(), "key");
    await writeFile(file, " \n\t\n");

    expect(problemOf({ [`${NAME}_FILE`]: file })).toBe(
      `${NAME}_FILE: ${file} holds no value (it is empty or only whitespace); put the value in it`,
    );
  });

  it("refuses a FIFO and a device instead of hanging or reading without end", async () => {
    const fifo = join(await makeTempDir(), "fifo");
    execFileSync("mkfifo", [fifo]);

    expect(problemOf({ [`${NAME}_FILE`]: fifo })).toMatch(/fifo is not a regular file/);
    expect(problemOf({ [`${NAME}_FILE`]: "/dev/zero" })).toMatch(
      /^CONNECTOR_ACCOUNTING_API_KEY_FILE: \/dev\/zero is not a regular file/,
    );
  });

  it("refuses a file larger than a secret can be", async () => {
    const file = join(await makeTempDir(), "big");
    await writeFile(file, "x".repeat(100_000));

    expect(problemOf({ [`${NAME}_FILE`]: file })).toMatch(
      /is 100000 bytes, more than a secret's 65536/,
    );
  });
});

describe("a BlackLine API key file ending in blank lines (what editors and templating tools leave)", () => {
  let sim: BlacklineSimulator;
  beforeAll(async () => {
    sim = await startBlacklineSimulator({ seed: 6, size: { users: 10, teams: 2, roles: 2 } });
  });
  afterAll(() => sim.close());

  it("syncs: the key is sent without them", async () => {
    const dir = await makeTempDir();
    const keyFile = join(dir, "api-key");
    await writeFile(keyFile, `${sim.credentials.apiKey}\n\n  \n`);
    const { CONNECTOR_ACCOUNTING_API_KEY: _sentFromTheFile, ...env } = sim.env();

    const run = await cli(["sync", "blackline", "--out", join(dir, "blackline.sync.jsonl")], {
      ...env,
      [`${NAME}_FILE`]: keyFile,
    });

    expect(run.code, run.stderr).toBe(0);
  });

  it("refuses a key file of two lines before any request: exit 2, the variable named", async () => {
    const dir = await makeTempDir();
    const keyFile = join(dir, "api-key");
    await writeFile(keyFile, `${sim.credentials.apiKey}\n${sim.credentials.apiKey}\n`);
    const { CONNECTOR_ACCOUNTING_API_KEY: _sentFromTheFile, ...env } = sim.env();
    const requests = sim.stats.requests;

    const run = await cli(["sync", "blackline", "--out", join(dir, "blackline.sync.jsonl")], {
      ...env,
      [`${NAME}_FILE`]: keyFile,
    });

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${NAME}_FILE: ${keyFile} holds 2 lines of text`);
    expect(run.stderr).not.toContain(sim.credentials.apiKey);
    expect(sim.stats.requests).toBe(requests);
  });
});
