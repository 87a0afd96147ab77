/** `<NAME>_FILE` secrets: regular files only, bounded, and redacted in the form that is sent. */
import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveSecrets } from "../../lib/config";
import { ConfigError } from "../../lib/errors";
import { redact } from "../../lib/redact";
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
  it("drops every trailing line break, and redacts the value as sent", async () => {
    const file = join(await makeTempDir(), "key");
    await writeFile(file, "  s3cr3t-from-file-91  \n\n\r\n");

    const env = resolveSecrets({ [`${NAME}_FILE`]: file }, [NAME]);

    expect(env[NAME]).toBe("  s3cr3t-from-file-91  ");
    expect(redact("sent s3cr3t-from-file-91 here")).toBe("sent [REDACTED] here");
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
