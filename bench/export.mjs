// `npm run build && node bench/export.mjs [users]`: the cost of `export` on a snapshot shaped like
// bench's blackline-100k (100,000 users, 2,000 teams, 50 roles, 3 teams and 1 role per user, so
// 400,000 grants), generated here. Runs the built command line for c1z and csv, each in a fresh
// process with bench/processProbe.mjs preloaded, and prints one JSON line per format: wall time,
// peak RSS (VmHWM), CPU, and the sizes written. Not part of `npm test`; it asserts nothing.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const root = join(import.meta.dirname, "..");
const users = Number(process.argv[2] ?? 100_000);
const teams = Math.max(1, Math.round(users / 50));
const roles = 50;
const work = await mkdtemp(join(tmpdir(), "ac-bench-export-"));

async function writeSnapshot(path) {
  const out = createWriteStream(path);
  const counts = { resource_type: 3, resource: 0, entitlement: 0, grant: 0 };
  let buffer = "";
  const line = async (record) => {
    buffer += `${JSON.stringify(record)}\n`;
    if (buffer.length > 1 << 16) {
      if (!out.write(buffer)) await once(out, "drain");
      buffer = "";
    }
  };
  await line({
    kind: "sync_start",
    syncId: "bench",
    connector: "blackline",
    startedAt: new Date().toISOString(),
    version: 1,
  });
  await line({ kind: "resource_type", id: "user", displayName: "User", traits: ["user"] });
  await line({ kind: "resource_type", id: "team", displayName: "Team", traits: ["group"] });
  await line({ kind: "resource_type", id: "role", displayName: "Role", traits: ["role"] });
  for (let i = 0; i < users; i++) {
    counts.resource++;
    await line({
      kind: "resource",
      type: "user",
      id: String(100000 + i),
      displayName: `User ${i} Lastname`,
      status: i % 20 === 0 ? "disabled" : "enabled",
      user: {
        login: `user${i}@example.com`,
        emails: [`user${i}@example.com`],
        givenName: "User",
        familyName: `Lastname${i}`,
      },
      profile: { jobTitle: "Accountant", department: `Dept ${i % 40}` },
    });
  }
  for (const [type, n, slug] of [
    ["team", teams, "member"],
    ["role", roles, "assigned"],
  ]) {
    for (let i = 0; i < n; i++) {
      counts.resource++;
      counts.entitlement++;
      await line({ kind: "resource", type, id: String(i), displayName: `${type} ${i}` });
      await line({
        kind: "entitlement",
        id: `${type}:${i}:${slug}`,
        resource: { type, id: String(i) },
        slug,
        displayName: `${type} ${i} ${slug}`,
        purpose: "assignment",
        grantableTo: ["user"],
      });
    }
  }
  for (let i = 0; i < users; i++) {
    const user = String(100000 + i);
    const held = [0, 1, 2].map((k) => `team:${(i * 7 + k * 13) % teams}:member`);
    held.push(`role:${i % roles}:assigned`);
    for (const entitlement of new Set(held)) {
      counts.grant++;
      await line({
        kind: "grant",
        id: `${entitlement}:user:${user}`,
        entitlement,
        principal: { type: "user", id: user },
      });
    }
  }
  await line({
    kind: "sync_end",
    syncId: "bench",
    status: "complete",
    finishedAt: new Date().toISOString(),
    counts,
    skipped: { dangling_grant: 0 },
  });
  out.end(buffer);
  await once(out, "close");
  return counts;
}

async function run(format, snapshot) {
  const out = join(work, `out.${format}`);
  const probeFile = join(work, `${format}.process.json`);
  const started = performance.now();
  const child = spawn(
    join(root, "bin", "access-connectors.js"),
    ["export", snapshot, "--format", format, out],
    {
      stdio: ["ignore", "pipe", "inherit"],
      env: {
        ...process.env,
        NODE_OPTIONS: `--import=${pathToFileURL(join(root, "bench", "processProbe.mjs")).href}`,
        BENCH_PROCESS_FILE: probeFile,
      },
    },
  );
  let stdout = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  const [code] = await once(child, "exit");
  const wallMs = Math.round(performance.now() - started);
  const probe = JSON.parse(await readFile(probeFile, "utf8"));
  return {
    format,
    code,
    wallS: wallMs / 1000,
    peakRssMiB: +(probe.peakRssBytes / 2 ** 20).toFixed(1),
    cpuS: +(probe.cpuMs / 1000).toFixed(1),
    outMiB: +((await stat(out)).size / 2 ** 20).toFixed(1),
    stdout: stdout.trim(),
  };
}

try {
  const snapshot = join(work, "snapshot.jsonl");
  const counts = await writeSnapshot(snapshot);
  const snapshotMiB = +((await stat(snapshot)).size / 2 ** 20).toFixed(1);
  process.stdout.write(`${JSON.stringify({ users, counts, snapshotMiB })}\n`);
  for (const format of ["c1z", "csv"])
    process.stdout.write(`${JSON.stringify(await run(format, snapshot))}\n`);
} finally {
  await rm(work, { recursive: true, force: true });
}
