/**
 * Each bound of a sync, lowered against the simulators (real HTTP servers on loopback): the run
 * fails with a message naming the bound, its value and the variable that raises it, leaves the
 * previous snapshot as it was and no temporary file behind; left unset, the defaults hold.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { syncToFile } from "../../lib/cli/commands/sync";
import type { CliIo } from "../../lib/cli/io";
import { exitCodeOf } from "../../lib/errors";
import { NetworkError, ResponseTooLargeError, type UpstreamOptions } from "../../lib/http";
import { type BlacklineSimulator, startBlacklineSimulator } from "../../lib/simulators/blackline";
import { startValimailSimulator, type ValimailSimulator } from "../../lib/simulators/valimail";
import { TooManyPagesError } from "../../lib/sync";
import { cli } from "../helpers/cli";
import { readSnapshot } from "../helpers/snapshot";
import { makeTempDir } from "../helpers/tempDir";

const PREVIOUS = "the previous snapshot\n";
const quietIo = (env: Record<string, string>): CliIo => ({
  stdout: { write: () => true },
  stderr: { write: () => true, isTTY: false },
  env,
});

/** A directory holding a previous snapshot at `out`. */
async function previousSnapshot(name: string) {
  const dir = await makeTempDir();
  const out = join(dir, name);
  await writeFile(out, PREVIOUS);
  return { dir, out };
}

/** Syncs with `syncToFile` (the CLI's sync) and returns what it threw, if anything. */
async function syncFails(
  connector: "blackline" | "valimail",
  env: Record<string, string>,
  out: string,
  upstream: UpstreamOptions = {},
): Promise<Error> {
  const error = await syncToFile(quietIo(env), env, { connector, out }, upstream).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof Error)) throw new Error("the sync succeeded");
  return error;
}

/** The previous snapshot unchanged, and nothing else in its directory. */
async function expectUntouched(dir: string, out: string) {
  expect(await readFile(out, "utf8")).toBe(PREVIOUS);
  expect(await readdir(dir)).toEqual([out.slice(dir.length + 1)]);
}

describe("the response size cap (CONNECTOR_<APP>_MAX_RESPONSE_MIB)", () => {
  let sim: BlacklineSimulator;
  let env: Record<string, string>;
  beforeAll(async () => {
    // 5,000 users in one page of 10,000: about 1.2 MiB of JSON.
    sim = await startBlacklineSimulator({
      seed: 3,
      size: { users: 5_000, teams: 4, roles: 3 },
      maxPageSize: 10_000,
    });
    env = {
      ...sim.env(),
      CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0",
      CONNECTOR_ACCOUNTING_PAGE_SIZE: "10000",
    };
  });
  afterAll(() => sim.close());

  it("fails an answer over a lowered cap, naming the cap, its value and both ways out", async () => {
    const { dir, out } = await previousSnapshot("blackline.sync.jsonl");

    const error = await syncFails(
      "blackline",
      { ...env, CONNECTOR_ACCOUNTING_MAX_RESPONSE_MIB: "1" },
      out,
    );

    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect(error.message).toMatch(
      /^GET \/v1\/users\?page=1&pageSize=10000: the answer is larger than 1 MiB, the response size cap \(CONNECTOR_ACCOUNTING_MAX_RESPONSE_MIB, now 1 MiB\), so it was not read; a list page this large wants smaller pages: lower CONNECTOR_ACCOUNTING_PAGE_SIZE, or raise CONNECTOR_ACCOUNTING_MAX_RESPONSE_MIB/,
    );
    expect(exitCodeOf(error)).toBe(1);
    await expectUntouched(dir, out);
  });

  it("reads the same answer under the default cap of 64 MiB", async () => {
    const dir = await makeTempDir();
    const out = join(dir, "blackline.sync.jsonl");

    const summary = await syncToFile(quietIo(env), env, { connector: "blackline", out });

    expect(summary.counts.resource).toBe(5_000 + 4 + 3);
    expect((await readSnapshot(out)).at(-1)).toMatchObject({ kind: "sync_end" });
  });
});

describe("the per-request timeout (CONNECTOR_<APP>_REQUEST_TIMEOUT)", () => {
  let sim: ValimailSimulator;
  beforeAll(async () => {
    sim = await startValimailSimulator({ users: 20, faults: { latencyMs: 1_500 } });
  });
  afterAll(() => sim.close());
  const once: UpstreamOptions = { retry: { maxAttempts: 1 } };

  it("fails a request slower than a lowered timeout, naming the variable, whatever the runtime's default", async () => {
    const { dir, out } = await previousSnapshot("valimail.sync.jsonl");
    const env = { ...sim.env(), CONNECTOR_EMAILAUTH_REQUEST_TIMEOUT: "1s" };

    const error = await syncFails("valimail", env, out, { ...once, timeoutMs: 30_000 });

    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toMatch(
      /^POST \/auth got no answer: no complete answer within 1000 ms, the per-request timeout; raise CONNECTOR_EMAILAUTH_REQUEST_TIMEOUT for a slow upstream/,
    );
    await expectUntouched(dir, out);
  });

  it("keeps the runtime's own timeout when unset", async () => {
    const dir = await makeTempDir();
    const out = join(dir, "valimail.sync.jsonl");

    const summary = await syncToFile(
      quietIo(sim.env()),
      sim.env(),
      { connector: "valimail", out },
      { ...once, timeoutMs: 5_000 },
    );

    expect(summary.counts.resource).toBeGreaterThanOrEqual(20);
  });
});

describe("the page cap (CONNECTOR_<APP>_MAX_PAGES_PER_LIST)", () => {
  let sim: ValimailSimulator;
  let env: Record<string, string>;
  beforeAll(async () => {
    sim = await startValimailSimulator({ users: 50 });
    env = {
      ...sim.env(),
      CONNECTOR_EMAILAUTH_REQUESTS_PER_SECOND: "0",
      CONNECTOR_EMAILAUTH_PAGE_SIZE: "10",
    };
  });
  afterAll(() => sim.close());

  it("fails a list longer than a lowered cap, naming the variable", async () => {
    const { dir, out } = await previousSnapshot("valimail.sync.jsonl");

    const error = await syncFails(
      "valimail",
      { ...env, CONNECTOR_EMAILAUTH_MAX_PAGES_PER_LIST: "4" },
      out,
    );

    expect(error).toBeInstanceOf(TooManyPagesError);
    expect(error.message).toBe(
      "Valimail users: more than 4 pages, the most one list may have (CONNECTOR_EMAILAUTH_MAX_PAGES_PER_LIST), and no end in sight; stopped rather than grow without end. If the list really is that long, raise CONNECTOR_EMAILAUTH_MAX_PAGES_PER_LIST or the page size; otherwise the server does not page as expected",
    );
    await expectUntouched(dir, out);
  });

  it("reads a list of exactly as many pages as the cap", async () => {
    const out = join(await makeTempDir(), "valimail.sync.jsonl");
    const capped = { ...env, CONNECTOR_EMAILAUTH_MAX_PAGES_PER_LIST: "5" };

    const summary = await syncToFile(quietIo(capped), capped, { connector: "valimail", out });

    expect(summary.requests).toBe(1 + 5);
  });
});

describe("the sync deadline (CONNECTOR_<APP>_SYNC_DEADLINE)", () => {
  let sim: BlacklineSimulator;
  beforeAll(async () => {
    // Every answer takes 400 ms; the sync needs dozens of them in turn, far beyond 1 s.
    sim = await startBlacklineSimulator({
      seed: 4,
      size: { users: 200, teams: 30, roles: 4 },
      faults: { latencyMs: 400 },
    });
  });
  afterAll(() => sim.close());

  it("stops a sync that passes it: exit 1, the variable named, the previous snapshot kept", async () => {
    const { dir, out } = await previousSnapshot("blackline.sync.jsonl");
    const env = {
      ...sim.env(),
      CONNECTOR_ACCOUNTING_PAGE_SIZE: "5",
      CONNECTOR_ACCOUNTING_SYNC_DEADLINE: "1s",
    };

    const run = await cli(["sync", "blackline", "--out", out], env);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /\nerror: the sync did not finish within 1s, its deadline \(CONNECTOR_ACCOUNTING_SYNC_DEADLINE\), so it was stopped and nothing was published: the previous snapshot stands\. If the tenant is that large or the upstream that slow, raise CONNECTOR_ACCOUNTING_SYNC_DEADLINE \(at most 168h\)\n$/,
    );
    await expectUntouched(dir, out);
  });
});
