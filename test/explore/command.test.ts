import { spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempDir } from "../helpers/tempDir";
import { writeFixtureSnapshot } from "./fixtureSnapshot";

// `explore`'s refusals, through the built executable (npm test builds it first): each exits 2
// with a message that names what is wrong, before any page is served.
const explore = (...args: string[]) =>
  spawnSync(process.execPath, ["bin/access-connectors.js", "explore", ...args], {
    encoding: "utf8",
    timeout: 30_000,
  });

describe("explore command: bad input exits 2 naming it", () => {
  it("a missing file, a bad port, a snapshot of another connector, a port in use", async () => {
    const dir = await makeTempDir("ac-explore-cli-");
    const missing = explore(join(dir, "nope.jsonl"));
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/cannot read .*nope\.jsonl: ENOENT; check the path/);
    expect(missing.stdout).toBe("");

    const snapshot = join(dir, "s.jsonl");
    await writeFixtureSnapshot(snapshot, { users: 5, variant: "new" });
    const port = explore(snapshot, "--port", "http");
    expect(port.status).toBe(2);
    expect(port.stderr).toContain(
      '--port: give a port number from 0 to 65535 (0: any free port), not "http"',
    );

    const other = join(dir, "other.jsonl");
    await writeFixtureSnapshot(other, { users: 5, variant: "old" });
    await writeFile(
      other,
      (await readFile(other, "utf8")).replace('"connector":"blackline"', '"connector":"valimail"'),
    );
    const mixed = explore(snapshot, "--diff", other);
    expect(mixed.status).toBe(2);
    expect(mixed.stderr).toMatch(
      /is a valimail snapshot and .* a blackline one: compare two syncs of one connector/,
    );

    const taken = createServer().listen(0, "127.0.0.1");
    await new Promise((resolve) => taken.once("listening", resolve));
    const busy = (taken.address() as { port: number }).port;
    try {
      const inUse = explore(snapshot, "--port", String(busy));
      expect(inUse.status).toBe(2);
      expect(inUse.stderr).toContain(
        `--port ${busy}: 127.0.0.1:${busy} cannot be listened on (EADDRINUSE)`,
      );
    } finally {
      taken.close();
    }
  });
});
