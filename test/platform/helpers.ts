import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip, gzipSync } from "node:zlib";
import { afterEach } from "vitest";
import { PlatformClient, type PlatformClientOptions } from "../../lib/platform";
import {
  type PlatformSimulator,
  type PlatformSimulatorOptions,
  startPlatformSimulator,
} from "../../lib/simulators/platform";
import { makeTempDir } from "../helpers/tempDir";

const running: PlatformSimulator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((sim) => sim.close()));
});

/** A platform simulator closed after the test. */
export async function platform(options: PlatformSimulatorOptions = {}): Promise<PlatformSimulator> {
  const sim = await startPlatformSimulator(options);
  running.push(sim);
  return sim;
}

/** Small backoff so that retries cost milliseconds; whatever the jitter, the outcome is the same. */
export const FAST_RETRY = { attempts: 4, baseDelayMs: 1, maxDelayMs: 5 } as const;

export function clientFor(
  sim: PlatformSimulator,
  overrides: Partial<PlatformClientOptions> = {},
): PlatformClient {
  return new PlatformClient({
    baseUrl: sim.url,
    clientId: sim.credentials.clientId,
    clientSecret: sim.credentials.clientSecret,
    hostId: "host-a",
    retry: FAST_RETRY,
    ...overrides,
  });
}

/** Writes `text` gzip-compressed to a fresh temporary file. */
export async function gzipFileOf(text: string, name = "snapshot.jsonl.gz"): Promise<string> {
  const path = join(await makeTempDir("ac-platform-"), name);
  await writeFile(path, gzipSync(Buffer.from(text, "utf8")));
  return path;
}

/**
 * A large gzip snapshot written as a stream: `lines` JSON lines of hash-derived hex, which
 * compresses to about half its size. Returns the path and the uncompressed text's SHA-256.
 */
export async function largeGzipFile(
  lines: number,
): Promise<{ path: string; textSha256: string; textBytes: number }> {
  const path = join(await makeTempDir("ac-platform-"), "large.jsonl.gz");
  const textHash = createHash("sha256");
  let textBytes = 0;
  function* generate() {
    for (let start = 0; start < lines; start += 1000) {
      let block = "";
      for (let i = start; i < Math.min(lines, start + 1000); i++) {
        const h = createHash("sha256").update(String(i)).digest("hex");
        block += `{"kind":"resource","type":"user","id":"${i}","h":"${h}"}\n`;
      }
      textHash.update(block);
      textBytes += Buffer.byteLength(block);
      yield Buffer.from(block);
    }
  }
  await pipeline(Readable.from(generate()), createGzip(), createWriteStream(path));
  return { path, textSha256: textHash.digest("hex"), textBytes };
}
