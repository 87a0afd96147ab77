import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "vitest";
import type { HealthReport } from "../../../lib/service";
import { startBlacklineSimulator } from "../../../lib/simulators/blackline";
import { cli } from "../../helpers/cli";
import { canonicalRecords, type Line, readSnapshot } from "../../helpers/snapshot";
import { scenario, waitFor } from "../harness";

/**
 * The soak: the built service with a 2-second interval for SOAK_MINUTES (default 10) against
 * simulators with faults. The upstream answers 429, 5xx and dropped connections at fixed
 * request counts (its HTTP layer retries them), the platform fails some uploads, polls and label
 * calls (decided by how many uploads it has taken), the upstream secret is broken for two syncs
 * in every fifty, and tasks (actions, repeated actions, on-demand syncs) arrive as it goes.
 * Every sync must end with an exact snapshot uploaded or with an `error` label; memory (RSS and
 * heap) and open file handles must stay flat (judged on runs of 5 minutes or more; shorter runs
 * check the rest). Prints and writes the figures (.build/soak-report.json).
 */
const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const SAMPLE_EVERY_MS = 5_000;

interface Sample {
  atMs: number;
  rssKiB: number;
  fds: number;
  /** The V8 heap in use, as the service's health file says (written every 5 s). */
  heapUsedMiB: number;
}

async function sample(pid: number, startedAt: number, healthFile: string): Promise<Sample> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const rssKiB = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? Number.NaN);
  const fds = (await readdir(`/proc/${pid}/fd`)).length;
  const health = JSON.parse(await readFile(healthFile, "utf8")) as HealthReport;
  return { atMs: Date.now() - startedAt, rssKiB, fds, heapUsedMiB: health.memoryMiB.heapUsed };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

const digest = (records: string[]) => createHash("sha256").update(records.join("\n")).digest("hex");

test(`the service for ${MINUTES} minutes at a 2 s interval with faults: exact uploads or error labels, memory and file handles flat`, async (context) => {
  const { expect } = context;
  const { platform, stateDir, start, closeLater } = await scenario(context);
  const upstream = await startBlacklineSimulator({
    size: { users: 400, teams: 25, roles: 8 },
    faults: {
      rateLimit: { every: 41, retryAfter: "seconds", seconds: 1 },
      serverErrors: { every: 53, burst: 1 },
      dropConnections: { every: 97 },
    },
  });
  closeLater(() => upstream.close());
  const { CONNECTOR_ACCOUNTING_CLIENT_SECRET: secret, ...upstreamEnv } = upstream.env();
  const secretFile = join(stateDir, "blackline-secret");
  await writeFile(secretFile, `${secret}\n`);

  // The reference: a local sync of the same tenant, without faults.
  const faults = upstream.faults;
  upstream.faults = {};
  const local = await cli(["sync", "blackline", "--out", join(stateDir, "reference.jsonl")], {
    ...upstream.env(),
    CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0",
  });
  expect(local.code).toBe(0);
  const reference = digest(canonicalRecords(await readSnapshot(join(stateDir, "reference.jsonl"))));
  upstream.faults = faults;

  const service = start(["blackline"], {
    ...upstreamEnv,
    CONNECTOR_ACCOUNTING_CLIENT_SECRET_FILE: secretFile,
    CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0",
    CONNECTOR_SYNC_INTERVAL: "2s",
  });
  const pid = service.child.pid as number;
  const healthFile = join(stateDir, "health.json");
  await waitFor("the health file", () => existsSync(healthFile));
  const startedAt = Date.now();
  const endAt = startedAt + MINUTES * 60_000;
  const samples: Sample[] = [];
  const checked = new Map<string, "exact" | "different">();
  let nextSampleAt = startedAt;
  let faultedUploadsFor = 0;
  let tasksFor = 0;
  let nextBreakAt = 25;
  let failedWhenBroken: number | undefined;
  const tasks: string[] = [];

  while (Date.now() < endAt) {
    expect(service.running, `the service exited: ${service.stderr}`).toBe(true);
    if (Date.now() >= nextSampleAt) {
      samples.push(await sample(pid, startedAt, healthFile));
      nextSampleAt += SAMPLE_EVERY_MS;
    }
    // Check each accepted upload once, then let its text go.
    for (const upload of platform.uploads.values()) {
      if (upload.accepted === 0 || checked.has(upload.syncId) || upload.text === undefined)
        continue;
      const lines = upload.text
        .split("\n")
        .filter((line) => line.length > 0)
        .map((line) => JSON.parse(line) as Line);
      const exact =
        lines[0]?.syncId === upload.syncId &&
        lines.at(-1)?.kind === "sync_end" &&
        digest(canonicalRecords(lines)) === reference;
      checked.set(upload.syncId, exact ? "exact" : "different");
      upload.text = undefined;
    }
    const uploads = platform.uploads.size;
    // Platform faults, by how many uploads it has taken: every 5th upload fails once mid-body
    // and once with 500 (both retried), every 7th a poll is dropped, every 11th a label call 500.
    if (uploads > faultedUploadsFor) {
      faultedUploadsFor = uploads;
      if (uploads % 5 === 0) {
        platform.failNext("snapshot", 1, "drop");
        platform.failNext("snapshot", 1, "status500");
      }
      if (uploads % 7 === 0) platform.failNext("nextTask", 2, "drop");
      if (uploads % 11 === 0) platform.failNext("status", 1, "status500");
    }
    // Tasks, by uploads: an action (BlackLine answers `unsupported`) and the same again, and
    // every 4th time an on-demand sync.
    if (uploads >= tasksFor + 3) {
      tasksFor = uploads;
      const request = {
        requestId: `soak-${uploads}`,
        connectorId: "blackline-soak",
        action: "disable_user",
        args: { user_id: "1000" },
      };
      tasks.push(platform.enqueueTask({ type: "action", request }));
      tasks.push(platform.enqueueTask({ type: "action", request }));
      if (uploads % 4 === 0) tasks.push(platform.enqueueTask({ type: "sync" }));
    }
    // The upstream secret broken from every fiftieth sync started (the 25th first) until two
    // syncs have failed with it.
    const started = service.logged("sync started").length;
    const failed = service.logged("sync failed").length;
    if (failedWhenBroken === undefined && started >= nextBreakAt) {
      failedWhenBroken = failed;
      nextBreakAt += 50;
      await writeFile(secretFile, "a-wrong-secret-for-a-while\n");
    } else if (failedWhenBroken !== undefined && failed >= failedWhenBroken + 2) {
      failedWhenBroken = undefined;
      await writeFile(secretFile, `${secret}\n`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  samples.push(await sample(pid, startedAt, healthFile));
  const stop = await service.stop("SIGTERM");
  expect(stop.code).toBe(0);

  // Every sync: an exact upload, or an error label; the one a stop abandoned uploads nothing.
  const started = service.logged("sync started").map((line) => String(line.syncId));
  const uploaded = new Set(service.logged("sync uploaded").map((line) => String(line.syncId)));
  const failed = new Set(service.logged("sync failed").map((line) => String(line.syncId)));
  const abandoned = new Set(
    service
      .logged("sync abandoned: the service is stopping; nothing was uploaded")
      .map((line) => String(line.syncId)),
  );
  const unaccounted = started.filter(
    (id) => !uploaded.has(id) && !failed.has(id) && !abandoned.has(id),
  );
  expect(unaccounted).toEqual([]);
  expect(abandoned.size).toBeLessThanOrEqual(1);
  for (const id of uploaded) {
    expect(checked.get(id), `upload ${id}`).toBe("exact");
    expect(platform.uploads.get(id)?.accepted, `upload ${id}`).toBe(1);
  }
  for (const id of [...failed, ...abandoned])
    expect(platform.uploads.get(id)?.accepted ?? 0).toBe(0);
  const errorLabels = platform.labels.filter((l) => l.label === "error").length;
  expect(errorLabels).toBeGreaterThanOrEqual(failed.size - 1);
  for (const id of tasks.slice(0, -3)) {
    expect(
      platform.finishedTasks.some((t) => t.id === id),
      `task ${id}`,
    ).toBe(true);
  }

  // Flat: the median of the last third against that of the first third after a warm-up (a sixth
  // of the run, at least two minutes: the heap grows to its working size over the first one).
  const warmUpMs = Math.max((MINUTES * 60_000) / 6, 120_000);
  const judged = MINUTES * 60_000 >= 2.5 * warmUpMs;
  const warm = samples.filter((s) => s.atMs >= warmUpMs);
  const third = Math.max(1, Math.floor(warm.length / 3));
  const early = warm.slice(0, third);
  const late = warm.slice(-third);
  const report = {
    minutes: MINUTES,
    intervalSeconds: 2,
    syncs: started.length,
    uploadedExact: uploaded.size,
    failedWithErrorLabel: failed.size,
    abandonedAtStop: abandoned.size,
    uploadAttempts: platform.count("snapshot"),
    tasks: tasks.length,
    tasksFinished: platform.finishedTasks.length,
    upstreamRequests: upstream.stats.requests,
    platformRequests: platform.requests.length,
    heapUsedMiB: {
      earlyMedian: median(early.map((s) => s.heapUsedMiB)),
      lateMedian: median(late.map((s) => s.heapUsedMiB)),
      max: Math.max(...samples.map((s) => s.heapUsedMiB)),
    },
    rssMiB: {
      earlyMedian: median(early.map((s) => s.rssKiB)) / 1024,
      lateMedian: median(late.map((s) => s.rssKiB)) / 1024,
      max: Math.max(...samples.map((s) => s.rssKiB)) / 1024,
    },
    fds: {
      earlyMax: Math.max(...early.map((s) => s.fds)),
      lateMax: Math.max(...late.map((s) => s.fds)),
    },
    samples: samples.length,
    memoryJudged: judged,
    stopMs: stop.ms,
  };
  console.log(`soak report: ${JSON.stringify(report, null, 2)}`);
  await mkdir(".build", { recursive: true });
  await writeFile(".build/soak-report.json", `${JSON.stringify({ report, samples }, null, 2)}\n`);

  expect(report.syncs).toBeGreaterThan((MINUTES * 60) / 2 / 4);
  if (!judged) {
    console.log("too short to judge memory and file handles (5 minutes at least)");
    return;
  }
  expect(report.rssMiB.lateMedian - report.rssMiB.earlyMedian).toBeLessThan(20);
  expect(report.heapUsedMiB.lateMedian - report.heapUsedMiB.earlyMedian).toBeLessThan(10);
  expect(report.fds.lateMax - report.fds.earlyMax).toBeLessThanOrEqual(4);
});
