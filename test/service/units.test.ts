import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ActionReply } from "../../lib/actions";
import { connectorNamed, UpstreamConnectors } from "../../lib/connectors";
import { ConfigError, CredentialsRejectedError } from "../../lib/errors";
import { encodeDigest, HashList, type SnapshotDigest } from "../../lib/guard";
import { NetworkError } from "../../lib/http";
import { registerSecret } from "../../lib/redact";
import {
  Backoff,
  createJsonLogger,
  describeSyncFailure,
  loadServiceConfig,
} from "../../lib/service";
import { HeldSnapshot } from "../../lib/service/HeldSnapshot";
import { linkedSignal } from "../../lib/service/linkedSignal";
import { ServiceState } from "../../lib/service/ServiceState";
import { makeTempDir } from "../helpers/tempDir";

const NEXT = new Date("2026-11-23T11:00:00.000Z");

describe("Backoff", () => {
  it("doubles from the base up to the cap, each wait between half and all of its step", () => {
    const low = new Backoff({ baseMs: 1_000, maxMs: 8_000 }, () => 0);
    const high = new Backoff({ baseMs: 1_000, maxMs: 8_000 }, () => 1);

    const lows = Array.from({ length: 6 }, () => low.next());
    const highs = Array.from({ length: 6 }, () => high.next());

    expect(lows).toEqual([500, 1_000, 2_000, 4_000, 4_000, 4_000]);
    expect(highs).toEqual([1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
    low.reset();
    expect(low.failures).toBe(0);
    expect(low.next()).toBe(500);
  });
});

describe("the service's JSON logger", () => {
  it("writes one redacted JSON object a line with the Powertools field names, child fields, and the level threshold", () => {
    const lines: string[] = [];
    const secret = "a-secret-value-for-the-logger-test";
    registerSecret(secret);
    const logger = createJsonLogger({
      write: (line) => lines.push(line),
      level: "info",
      fields: { connector: "blackline" },
      now: () => new Date("2026-11-23T10:00:00.000Z"),
    });

    logger
      .child({ syncId: "s-1" })
      .info("sync started", { message: "not the message", token: secret });
    logger.debug("dropped");
    logger.error("failed", {
      error: new NetworkError({ method: "GET", path: "/v1/users" }, "ECONNRESET"),
    });

    expect(lines).toHaveLength(2);
    expect(lines.every((line) => line.endsWith("\n") && !line.slice(0, -1).includes("\n"))).toBe(
      true,
    );
    expect(JSON.parse(lines[0] as string)).toEqual({
      level: "INFO",
      message: "sync started",
      timestamp: "2026-11-23T10:00:00.000Z",
      service: "access-connectors",
      connector: "blackline",
      syncId: "s-1",
      token: "[REDACTED]",
    });
    expect(JSON.parse(lines[1] as string).error).toEqual({
      name: "NetworkError",
      message: "GET /v1/users got no answer: ECONNRESET",
      code: "network",
    });
  });
});

describe("the service's state file", () => {
  const reply = (requestId: string): ActionReply => ({
    requestId,
    status: "succeeded",
    result: { user_id: "u1", active: false, changed: true },
  });

  it("remembers replies, the label and pending finishes across opens, written whole", async () => {
    const dir = await makeTempDir();
    const path = join(dir, "state.json");
    const first = await ServiceState.open(path, createJsonLogger({ write: () => {} }));

    await first.remember("fp-1", reply("r-1"));
    await first.setLabel({ label: "connected", delivered: true });
    await first.queueFinish({ taskId: "t-1", outcome: { status: "succeeded", result: {} } });
    const second = await ServiceState.open(path, createJsonLogger({ write: () => {} }));

    expect(second.reply("r-1")).toEqual({ fingerprint: "fp-1", reply: reply("r-1") });
    expect(second.label).toEqual({ label: "connected", delivered: true });
    expect(second.finishes.map((f) => f.taskId)).toEqual(["t-1"]);
    expect(await readdir(dir)).toEqual(["state.json"]);
  });

  it("forgets replies older than the retention", async () => {
    const path = join(await makeTempDir(), "state.json");
    const state = await ServiceState.open(path, createJsonLogger({ write: () => {} }));
    const now = Date.parse("2026-11-23T10:00:00Z");

    await state.remember("fp", reply("old"), now - 8 * 24 * 3_600_000);
    await state.remember("fp", reply("new"), now);

    expect(state.reply("old")).toBeUndefined();
    expect(state.reply("new")).toBeDefined();
  });

  it("sets an unreadable file aside and starts afresh, saying so", async () => {
    const dir = await makeTempDir();
    const path = join(dir, "state.json");
    await writeFile(path, "{not json");
    const lines: string[] = [];

    const state = await ServiceState.open(path, createJsonLogger({ write: (l) => lines.push(l) }));

    expect(state.repliesRemembered).toBe(0);
    expect((await readdir(dir)).some((name) => name.startsWith("state.json.unreadable-"))).toBe(
      true,
    );
    expect(lines.join("")).toContain("set aside");
    await state.setLabel({ label: "error", detail: "x", delivered: false });
    expect(JSON.parse(await readFile(path, "utf8"))).toMatchObject({ version: 1 });
  });
});

describe("the removal guard's digest in the state directory", () => {
  const digestOf = (syncId: string): SnapshotDigest => ({
    connector: "blackline",
    syncId,
    users: new BigUint64Array([1n, 5n, 9n]),
    grants: new BigUint64Array([2n, 4n]),
  });

  it("is staged by the count, let go before the upload, and renamed onto the published one after it", async () => {
    const dir = await makeTempDir("ac-service-digest-");
    const held = new HeldSnapshot(dir);
    const first = digestOf("s1");
    const bytes = encodeDigest(first);
    expect(await held.removals(first)).toBeUndefined();
    held.letGo(first);
    expect([first.users.length, first.grants.length]).toEqual([0, 0]);
    await held.recordPublished(first);
    expect(await readdir(dir)).toEqual(["published.digest"]);
    expect(await readFile(join(dir, "published.digest"))).toEqual(bytes);

    const second = { ...digestOf("s2"), users: new BigUint64Array([1n, 9n]) };
    expect(await held.removals(second)).toEqual({
      connector: "blackline",
      users: { previous: 3, removed: 1 },
      grants: { previous: 2, removed: 0 },
    });
    // Not published (held, failed): the staged file goes, the published one stays.
    await held.dropStaged();
    expect(await readdir(dir)).toEqual(["published.digest"]);
    expect(await readFile(join(dir, "published.digest"))).toEqual(bytes);
  });

  it("gives back the memory of a staged digest's hashes (every view of them empty), written before", async () => {
    const dir = await makeTempDir("ac-service-digest-");
    const held = new HeldSnapshot(dir);
    const list = new HashList();
    for (let i = 0; i < 3_000; i++) list.push(BigInt(i));
    const users = list.finish();
    const digest = { ...digestOf("s1"), users };
    const bytes = encodeDigest(digest);
    await held.removals(digest);
    held.letGo(digest);
    expect([users.length, users.buffer.byteLength]).toEqual([0, 0]);
    await held.recordPublished(digest);
    expect(await readFile(join(dir, "published.digest"))).toEqual(bytes);
  });

  it("keeps the hashes of a digest it did not stage, and writes them when it is published", async () => {
    const dir = await makeTempDir("ac-service-digest-");
    const held = new HeldSnapshot(dir);
    const digest = digestOf("s1");
    held.letGo(digest);
    expect(digest.users.length).toBe(3);
    await held.recordPublished(digest);
    expect(await readFile(join(dir, "published.digest"))).toEqual(encodeDigest(digestOf("s1")));
  });
});

describe("the error label's detail", () => {
  it("says what went wrong, what to do, and when the next sync starts", () => {
    const rejected = describeSyncFailure(
      new CredentialsRejectedError(
        "BlackLine rejected the token request (invalid_client). Check CONNECTOR_ACCOUNTING_CLIENT_ID and CONNECTOR_ACCOUNTING_CLIENT_SECRET.",
      ),
      "blackline",
      NEXT,
    );
    const unreachable = describeSyncFailure(
      new NetworkError({ method: "GET", path: "/scim/v2/Users" }, "ECONNREFUSED"),
      "valimail",
      NEXT,
    );
    const config = describeSyncFailure(
      new ConfigError([
        { variable: "CONNECTOR_EMAILAUTH_APP_ID_FILE", message: "cannot read /x (ENOENT)" },
      ]),
      "valimail",
      NEXT,
    );

    expect(rejected).toBe(
      "BlackLine rejected the credentials: BlackLine rejected the token request (invalid_client). Check CONNECTOR_ACCOUNTING_CLIENT_ID and CONNECTOR_ACCOUNTING_CLIENT_SECRET. Correct them: they are read again before each sync, so an updated *_FILE needs no restart. Nothing was uploaded; the next sync starts at 2026-11-23T11:00:00.000Z.",
    );
    expect(unreachable).toContain("Valimail could not be reached");
    expect(unreachable).toContain("CONNECTOR_EMAILAUTH_BASE_URL");
    expect(config).toContain("CONNECTOR_EMAILAUTH_APP_ID_FILE");
  });
});

describe("the service's configuration", () => {
  it("reports every problem at once, each naming its variable", async () => {
    const dir = await makeTempDir();
    const file = join(dir, "not-a-directory");
    await writeFile(file, "");

    const error = await loadServiceConfig("valimail", {
      CONNECTOR_STATE_DIR: file,
      CONNECTOR_LOG_LEVEL: "chatty",
      CONNECTOR_NAME: "blackline",
    }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ConfigError);
    const variables = (error as ConfigError).issues.map((issue) => issue.variable);
    expect(variables).toEqual(
      expect.arrayContaining([
        "CONNECTOR_NAME",
        "CONNECTOR_PLATFORM_URL",
        "CONNECTOR_HOST_ID",
        "CONNECTOR_LOG_LEVEL",
        "CONNECTOR_STATE_DIR",
      ]),
    );
  });
});

describe("the upstream connectors of the service", () => {
  it("are built again only when the settings change, a secret file's content included", async () => {
    const dir = await makeTempDir();
    const secretFile = join(dir, "secret");
    await writeFile(secretFile, "the-first-client-secret\n");
    const env = {
      CONNECTOR_ACCOUNTING_BASE_URL: "http://127.0.0.1:9",
      CONNECTOR_ACCOUNTING_CLIENT_ID: "id",
      CONNECTOR_ACCOUNTING_CLIENT_SECRET_FILE: secretFile,
      CONNECTOR_ACCOUNTING_USERNAME: "user",
      CONNECTOR_ACCOUNTING_API_KEY: "an-api-key",
      CONNECTOR_ACCOUNTING_SCOPE: "DataIngestionAPI instance_3f2504e0-4f89-11d3-9a0c-0305e82c3301",
    };
    const upstream = new UpstreamConnectors(connectorNamed("blackline"), () => env);

    const first = upstream.syncer();
    const same = upstream.syncer();
    await writeFile(secretFile, "the-rotated-client-secret\n");
    const rotated = upstream.syncer();

    expect(same).toBe(first);
    expect(rotated).not.toBe(first);
  });
});

describe("linkedSignal", () => {
  it("aborts with its parent while linked, and not after release", () => {
    const parent = new AbortController();
    const linked = linkedSignal(parent.signal);
    const released = linkedSignal(parent.signal);

    released.release();
    parent.abort(new Error("stopping"));

    expect(linked.signal.aborted).toBe(true);
    expect((linked.signal.reason as Error).message).toBe("stopping");
    expect(released.signal.aborted).toBe(false);
    expect(linkedSignal(parent.signal).signal.aborted).toBe(true);
  });
});
