// The Lambda bundles stay under issue 8's size target, and what was cut from them stays out: each
// cut named by a module whose absence the bundle's source map shows (it lists every input).
// Sizes are bytes, not times; the package is the one the other AWS tests deploy.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { ShardWorkers } from "../../lib/cloud/shardWorkers";
import { ensurePackaged } from "./harness/package";

/** Issue 8: "bundle < 1 MB minified", in the unit bench/results.ts checks it in. */
const MAX_HANDLER_BYTES = 1_000_000;

interface ManifestEntry {
  key: string;
  handlerBytes: number;
}

let functionsDir: string;
let manifest: ManifestEntry[];

async function sources(key: string): Promise<string[]> {
  const map = JSON.parse(await readFile(join(functionsDir, key, "handler.mjs.map"), "utf8"));
  return map.sources as string[];
}

beforeAll(async () => {
  ({ functionsDir } = await ensurePackaged());
  manifest = JSON.parse(await readFile(join(functionsDir, "manifest.json"), "utf8"));
});

describe("function bundles", () => {
  it("each handler.mjs is under 1 MB minified", async () => {
    expect(manifest.map((f) => f.key).sort()).toEqual(
      ["action", "finalize", "scheduler", "settings", "syncWorker"].sort(),
    );
    for (const f of manifest) {
      const bytes = (await readFile(join(functionsDir, f.key, "handler.mjs"))).length;
      expect(f.handlerBytes, f.key).toBe(bytes);
      expect(bytes, `${f.key}: ${bytes} bytes`).toBeLessThan(MAX_HANDLER_BYTES);
    }
  });

  it("finalize carries its shard worker, which runs from the package and carries no AWS SDK", async () => {
    const script = join(functionsDir, "finalize", "shard-worker.mjs");
    const map = JSON.parse(await readFile(`${script}.map`, "utf8")) as { sources: string[] };
    expect(map.sources.filter((s) => s.includes("node_modules/@aws-sdk/"))).toEqual([]);
    const workers = new ShardWorkers(1, pathToFileURL(script));
    try {
      const page = await workers.prepare([
        '{"kind":"resource","type":"user","id":"u1","displayName":"U","user":{"login":"u","emails":[]}}\n',
        '{"kind":"grant","id":"g1","entitlement":"e1","principal":{"type":"user","id":"u1"}}\n',
      ]);
      expect(page).toMatchObject({ grants: 1, users: ["user", "u1"] });
      await expect(workers.prepare(["{not json\n"])).rejects.toThrow(SyntaxError);
    } finally {
      await workers.close();
    }
  });

  it("only action and settings carry Powertools idempotency (lib/cloud's index is not imported)", async () => {
    for (const f of manifest) {
      const idempotency = (await sources(f.key)).filter((s) =>
        /node_modules\/@aws-lambda-powertools\/(?:idempotency|jmespath)\//.test(s),
      );
      if (["action", "settings"].includes(f.key)) {
        expect(idempotency.length, f.key).toBeGreaterThan(0);
      } else expect(idempotency, f.key).toEqual([]);
    }
  });

  it("the X-Ray SDK gets semver's gte alone, and package.json files their name and version", async () => {
    for (const f of manifest) {
      const all = await sources(f.key);
      expect(all, f.key).toContain("semver-gte-only:node_modules/semver/functions/gte.js");
      expect(
        all.filter((s) => /node_modules\/semver\/(?:classes\/range|index)\.js$/.test(s)),
      ).toEqual([]);
      // Every package.json comes through the plugin (name and version), none whole.
      const whole = all.filter(
        (s) => s.endsWith("/package.json") && !s.startsWith("package-json-"),
      );
      expect(whole, f.key).toEqual([]);
      expect(all, f.key).toContain(
        "package-json-name-and-version:node_modules/@aws-sdk/client-s3/package.json",
      );
    }
  });
});
