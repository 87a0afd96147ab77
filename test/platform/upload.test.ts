import { createHash } from "node:crypto";
import { once } from "node:events";
import { open, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { PlatformClient, PlatformStatusError, SnapshotFileError } from "../../lib/platform";
import { makeTempDir } from "../helpers/tempDir";
import { clientFor, gzipFileOf, largeGzipFile, platform } from "./helpers";

const SNAPSHOT = [
  '{"kind":"sync_start","syncId":"s-1","connector":"valimail","startedAt":"2026-11-21T10:00:00Z","version":1}',
  '{"kind":"resource","type":"user","id":"1042","displayName":"Zoë Østergaard"}',
  '{"kind":"sync_end","syncId":"s-1","status":"complete","finishedAt":"2026-11-21T10:01:00Z","counts":{"resource":1}}',
  "",
].join("\n");

async function sha256Of(path: string): Promise<string> {
  return createHash("sha256")
    .update(await readFile(path))
    .digest("hex");
}

describe("uploadSnapshot", () => {
  it("sends the gzip file with its checksum and length; the platform gets the snapshot back", async () => {
    const sim = await platform();
    const file = await gzipFileOf(SNAPSHOT);
    const client = clientFor(sim);

    const result = await client.uploadSnapshot("s-1", file);

    const upload = sim.uploads.get("s-1");
    expect(result).toEqual({ sha256: await sha256Of(file), bytes: upload?.bytes, attempts: 1 });
    expect(upload).toMatchObject({
      received: 1,
      accepted: 1,
      rejected: 0,
      text: SNAPSHOT,
      sha256: result.sha256,
      contentLength: String(result.bytes),
    });
  });

  it("is retried after a 500 and lands exactly once, the file re-read from the start", async () => {
    const sim = await platform();
    sim.failNext("snapshot", 1, "status500");
    const file = await gzipFileOf(SNAPSHOT);

    const result = await clientFor(sim).uploadSnapshot("s-1", file);

    expect(result.attempts).toBe(2);
    expect(sim.uploads.get("s-1")).toMatchObject({ received: 2, accepted: 1, text: SNAPSHOT });
  });

  it("is retried after a dropped connection and lands exactly once", async () => {
    const sim = await platform({ failUploads: 1 });
    sim.failNext("snapshot", 1, "drop");
    const file = await gzipFileOf(SNAPSHOT);

    const result = await clientFor(sim).uploadSnapshot("s-2", file);

    expect(result.attempts).toBe(3);
    expect(sim.requests.filter((r) => r.route === "snapshot").map((r) => r.outcome)).toEqual([
      500,
      "dropped",
      200,
    ]);
    expect(sim.uploads.get("s-2")).toMatchObject({ received: 3, accepted: 1, text: SNAPSHOT });
  });

  it("refreshes the token once on 401 and re-sends the file", async () => {
    const sim = await platform();
    const client = clientFor(sim);
    await client.setStatus("syncing");
    sim.revokeTokens();

    const result = await client.uploadSnapshot("s-3", await gzipFileOf(SNAPSHOT));

    expect(result.attempts).toBe(2);
    expect(sim.tokenRequests).toBe(2);
    expect(sim.uploads.get("s-3")).toMatchObject({ received: 2, accepted: 1, text: SNAPSHOT });
  });

  it("streams a multi-megabyte file, through a dropped connection", async () => {
    const sim = await platform();
    sim.failNext("snapshot", 1, "drop");
    const { path, textSha256, textBytes } = await largeGzipFile(200_000);
    const client = clientFor(sim);

    const result = await client.uploadSnapshot("big", path);

    const upload = sim.uploads.get("big");
    expect(result.bytes).toBeGreaterThan(5_000_000);
    expect(upload?.accepted).toBe(1);
    expect(upload?.bytes).toBe(result.bytes);
    expect(upload?.contentLength).toBe(String(result.bytes));
    // The body arrived in pieces as it was read from disk, not as one buffer.
    expect(upload?.chunks).toBeGreaterThan(10);
    expect(Buffer.byteLength(upload?.text ?? "")).toBe(textBytes);
    expect(
      createHash("sha256")
        .update(upload?.text ?? "")
        .digest("hex"),
    ).toBe(textSha256);
  });

  it("reads the file from disk while sending: bytes changed mid-upload arrive changed", async () => {
    // Prepare: 32 MiB, far more than socket buffers hold; the server stops reading after the
    // first chunk. A client that had read the file whole would send the old tail.
    const size = 32 * 1024 * 1024;
    const tail = 1024 * 1024;
    const file = join(await makeTempDir(), "big.gz");
    await writeFile(file, Buffer.alloc(size, 0x61));
    let firstChunk!: () => void;
    const started = new Promise<void>((resolve) => {
      firstChunk = resolve;
    });
    let resume!: () => void;
    const resumed = new Promise<void>((resolve) => {
      resume = resolve;
    });
    let received: Buffer[] = [];
    const server = createServer(async (req, res) => {
      if (req.url === "/auth/v1/token") {
        for await (const _ of req) {
          // drain
        }
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ access_token: "stream-token-0001", expires_in: 60 }));
        return;
      }
      const chunks = req[Symbol.asyncIterator]();
      const first = await chunks.next();
      received = [first.value as Buffer];
      firstChunk();
      await resumed;
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) {
        received.push(next.value as Buffer);
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    onTestFinished(() => {
      server.closeAllConnections();
      server.close();
    });
    const client = new PlatformClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      clientId: "id",
      clientSecret: "stream-secret",
      hostId: "h",
    });

    // Act
    const upload = client.uploadSnapshot("stream", file);
    await started;
    const handle = await open(file, "r+");
    await handle.write(Buffer.alloc(tail, 0x62), 0, tail, size - tail);
    await handle.close();
    resume();
    const result = await upload;

    // Assess
    const body = Buffer.concat(received);
    expect(result.bytes).toBe(size);
    expect(body.length).toBe(size);
    expect(body.subarray(size - tail).every((byte) => byte === 0x62)).toBe(true);
    expect(body.subarray(0, size - tail).every((byte) => byte === 0x61)).toBe(true);
  });

  it("does not retry a body the platform refuses (400), and says why", async () => {
    const sim = await platform();
    const file = join(await makeTempDir(), "plain.jsonl");
    await writeFile(file, SNAPSHOT);

    const error = await clientFor(sim)
      .uploadSnapshot("s-4", file)
      .catch((caught: unknown) => caught);

    expect(PlatformStatusError.is(error) && error.status).toBe(400);
    expect((error as Error).message).toBe(
      "PUT /connector/v1/syncs/s-4/snapshot answered 400: not_gzip: the body is not a gzip stream",
    );
    expect(sim.uploads.get("s-4")).toMatchObject({ received: 1, accepted: 0, rejected: 1 });
  });

  it("names a snapshot file that cannot be read, before sending anything", async () => {
    const sim = await platform();

    const error = await clientFor(sim)
      .uploadSnapshot("s-5", "/nonexistent/snapshot.jsonl.gz")
      .catch((caught: unknown) => caught);

    expect(SnapshotFileError.is(error)).toBe(true);
    expect((error as Error).message).toBe(
      "cannot read the snapshot /nonexistent/snapshot.jsonl.gz (ENOENT)",
    );
    expect(sim.requests).toEqual([]);
  });

  it("encodes the sync id in the path", async () => {
    const sim = await platform();

    await clientFor(sim).uploadSnapshot("run 7/a", await gzipFileOf(SNAPSHOT));

    expect(sim.requests.at(-1)?.path).toBe("/connector/v1/syncs/run%207%2Fa/snapshot");
    expect(sim.uploads.get("run 7/a")?.accepted).toBe(1);
  });
});
