import { spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../helpers/cli";
import { makeTempDir } from "../helpers/tempDir";
import { writeFixtureSnapshot } from "./fixtureSnapshot";

// `explore`'s refusals: each exits 2 with a message that names what is wrong, before any page is
// served. In this process, but the port in use, which the built executable meets (npm test
// builds it first): the page's files are beside the bundle.
describe("explore command: bad input exits 2 naming it", () => {
  it("a missing file, a bad port, snapshots of two connectors", async () => {
    const dir = await makeTempDir("ac-explore-cli-");
    const missing = await cli(["explore", join(dir, "nope.jsonl")], {});
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /nope\.jsonl cannot be read: no such file \(ENOENT\); check the path/,
    );
    expect(missing.stdout).toBe("");

    const snapshot = join(dir, "s.jsonl");
    await writeFixtureSnapshot(snapshot, { users: 5, variant: "new" });
    const port = await cli(["explore", snapshot, "--port", "http"], {});
    expect(port.code).toBe(2);
    expect(port.stderr).toContain(
      '--port: give a port number from 0 to 65535 (0: any free port), not "http"',
    );

    const other = join(dir, "other.jsonl");
    await writeFixtureSnapshot(other, { users: 5, variant: "old" });
    const text = await readFile(other, "utf8");
    await writeFile(other, text.replace('"connector":"blackline"', '"connector":"valimail"'));
    const mixed = await cli(["explore", snapshot, "--diff", other], {});
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toMatch(
      /is a valimail snapshot and .* a blackline one: compare two syncs of one connector/,
    );
  });

  it("a port in use", async () => {
    const dir = await makeTempDir("ac-explore-cli-");
    const snapshot = join(dir, "s.jsonl");
    await writeFixtureSnapshot(snapshot, { users: 5, variant: "new" });
    const taken = createServer().listen(0, "127.0.0.1");
    await new Promise((resolve) => taken.once("listening", resolve));
    const busy = (taken.address() as { port: number }).port;
    try {
      const run = spawnSync(
        process.execPath,
        ["bin/access-connectors.js", "explore", snapshot, "--port", String(busy)],
        { encoding: "utf8", timeout: 30_000 },
      );
      expect(run.status).toBe(2);
      expect(run.stderr).toContain(
        `--port ${busy}: 127.0.0.1:${busy} cannot be listened on (EADDRINUSE)`,
      );
    } finally {
      taken.close();
    }
  });
});
