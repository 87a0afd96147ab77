/**
 * The cloud finalize's gzip snapshot on a /tmp that cannot take it: `writeRunSnapshot`, the part
 * of `finalizeRun` that writes the file (the rest needs DynamoDB and S3: the AWS tier runs it on
 * moto), under a file size limit (`ulimit -f`, real EFBIG from the kernel) in a child process.
 * Before, finalize piped gzip into the file by hand and awaited the file's close only after the
 * assembler: the file's error was an unhandled rejection that ended the process
 * (`EFBIG: file too large, write`, no path), the Lambda crashed and the run was never ended.
 */
import { execFile } from "node:child_process";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { bundleScript } from "../helpers/bundleScript";
import { makeTempDir } from "../helpers/tempDir";

describe("finalize's gzip snapshot past a file size limit (EFBIG)", () => {
  it("fails with WriteFailedError naming the file and the fix, leaves no file, and the process goes on", async () => {
    const dir = await makeTempDir();
    const out = join(dir, "out");
    const script = join(dir, "finalize.mjs");
    // Two shards of 4,000 users with random ids (gzip cannot shrink them below 64 KiB).
    bundleScript(
      `
        import { mkdirSync, readdirSync } from "node:fs";
        import { randomBytes } from "node:crypto";
        import { Readable } from "node:stream";
        import { writeRunSnapshot } from "./lib/cloud/runSnapshot";
        mkdirSync(${JSON.stringify(out)});
        const shard = () => Readable.from(Array.from({ length: 4000 }, () =>
          JSON.stringify({ kind: "resource", type: "user", id: randomBytes(24).toString("hex"), displayName: "x" }) + "\\n"));
        try {
          await writeRunSnapshot(${JSON.stringify(join(out, "s1.jsonl.gz"))}, { syncId: "s1", connector: "blackline", startedAt: new Date().toISOString() }, {
            resourceTypes: [],
            shardKeys: ["a", "b"],
            openShard: async () => shard(),
          });
          console.log(JSON.stringify({ ok: true }));
        } catch (error) {
          console.log(JSON.stringify({ name: error.name, code: error.code, path: error.path, message: error.message, left: readdirSync(${JSON.stringify(out)}) }));
        }
      `,
      script,
    );

    const { stdout } = await promisify(execFile)(
      "/bin/sh",
      ["-c", 'ulimit -f 128 && exec "$@"', "sh", process.execPath, script],
      { timeout: 30_000 },
    );

    const partial = join(out, ".s1.jsonl.gz.s1.partial");
    expect(JSON.parse(stdout)).toEqual({
      name: "WriteFailedError",
      code: "write_failed",
      path: partial,
      message: `cannot write the new snapshot ${partial}: the file reached the largest size this process may write (its file size limit, ulimit -f) or the filesystem allows (EFBIG), so the sync stopped and nothing was published; the previous snapshot stands. Raise the limit, or give the finalize function more ephemeral storage for /tmp (ephemeralStorageSize in serverless.yml; Lambda's default is 512 MB)`,
      left: [],
    });
    expect(await readdir(dir)).toEqual(["finalize.mjs", "out"]);
  }, 40_000);
});
