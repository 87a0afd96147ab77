// The mass-deletion guard in the cloud runtime, on moto_server: an instance whose tenant shrinks
// between two runs has its second run held (nothing uploaded, label error with the reason and the
// release command, the instance free for its next run, the assembled snapshot kept in S3), and
// `cloud release` publishes it once. The upstream and the platform are the simulators on loopback.
// The cases run in cloud.test.ts, first, on that file's stack: one moto_server and one deploy for
// both (about 7 s of a worker's time: starting moto, deploying, loading the file's modules).
import { HeadObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, expect, it } from "vitest";
import { InstanceRegistry, RunStore } from "../../lib/cloud";
import { type BlacklineSimulator, startBlacklineSimulator } from "../../lib/simulators/blackline";
import { type PlatformSimulator, startPlatformSimulator } from "../../lib/simulators/platform";
import {
  alarmMetric,
  awsClientConfig,
  deployedDashboard,
  emittedMetrics,
  graphedMetrics,
  type MetricRef,
  type Moto,
  metricKey,
  runOperator,
  type Stack,
} from "./harness";

/**
 * The guard's cases, in the describe block that calls this, on a freshly deployed stack (no run
 * before them: the metrics case reads every function's output since the deploy). `deployed`
 * gives the stack once the file's beforeAll has deployed it, with the operator commands' AWS
 * environment set.
 */
export function removalGuardCases(deployed: () => { moto: Moto; stack: Stack }) {
  let moto: Moto;
  let stack: Stack;
  let full: BlacklineSimulator;
  let shrunk: BlacklineSimulator;
  let platform: PlatformSimulator;

  beforeAll(async () => {
    ({ moto, stack } = deployed());
    const size = { teams: 20, roles: 6 };
    full = await startBlacklineSimulator({ seed: 5, size: { users: 300, ...size } });
    // The same seed with 200 users: 100 of the 300 are gone (33.3%).
    shrunk = await startBlacklineSimulator({ seed: 5, size: { users: 200, ...size } });
    platform = await startPlatformSimulator();
  });

  afterAll(async () => {
    await full?.close();
    await shrunk?.close();
    await platform?.close();
  });

  const operator = (argv: string[], env: Record<string, string> = {}) =>
    runOperator(stack, argv, env);
  const lastJson = (stdout: string) =>
    JSON.parse(stdout.trim().split("\n").at(-1) as string) as Record<string, unknown>;
  const envOf = (sim: BlacklineSimulator) => ({
    ...sim.env(),
    ...platform.env(),
    CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0",
  });

  async function runQueues() {
    await stack.drainQueue("syncWorker");
    await stack.drainQueue("finalize");
  }

  /**
   * New settings for the instance: a warm function trusts a secret it read for five minutes, so the
   * functions are made cold here, as they would be after that time.
   */
  async function putSettings(sim: BlacklineSimulator, connectorId = "bl-guard") {
    const put = await operator(["put-instance", connectorId, "blackline", "--no-sync"], envOf(sim));
    expect(put.code).toBe(0);
    for (const fn of ["scheduler", "syncWorker", "finalize"]) await stack.updateEnvironment(fn, {});
  }

  const usersIn = (text: string | undefined) =>
    (text ?? "").split("\n").filter((line) => line.includes('"kind":"resource","type":"user"'))
      .length;

  it("holds a run that removes a third of the users, and `cloud release` publishes it once", async () => {
    const registry = new InstanceRegistry(stack.outputs.InstancesTableName as string);
    const runs = new RunStore(stack.outputs.RunsTableName as string);

    const wrong = await operator(["put-instance", "bl-guard", "blackline"], {
      ...envOf(full),
      CONNECTOR_MAX_REMOVAL_PERCENT: "thirty",
    });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('CONNECTOR_MAX_REMOVAL_PERCENT: "thirty" is not a limit');
    expect(await registry.get("bl-guard")).toBeUndefined();

    const put = await operator(["put-instance", "bl-guard", "blackline"], envOf(full));
    expect(put.code).toBe(0);
    const first = lastJson(put.stdout).syncId as string;
    await runQueues();
    expect([...platform.uploads.keys()]).toEqual([first]);

    await putSettings(shrunk);
    const second = lastJson((await operator(["sync", "bl-guard"])).stdout).syncId as string;
    await runQueues();

    // Held: nothing uploaded, the reason and the release command on the label and the row.
    expect([...platform.uploads.keys()]).toEqual([first]);
    const label = platform.labels.at(-1);
    expect(label?.label).toBe("error");
    expect(label?.detail).toMatch(
      /^The new snapshot was held, not published: it removes 100 of 300 users \(33\.3%\) and [\d,]+ of [\d,]+ grants \([\d.]+%\); the limit is 30% \(CONNECTOR_MAX_REMOVAL_PERCENT in the instance's settings\)\. If these removals are real, publish it as it is: access-connectors cloud release bl-guard --stage dev \(or invoke the scheduler with \{"connectorId":"bl-guard","release":true\}\)\./,
    );
    expect(await runs.get(second)).toMatchObject({ status: "held", error: label?.detail });
    const row = await registry.get("bl-guard");
    expect(row).toMatchObject({ label: "error", lastSyncId: second, lastSyncStatus: "error" });
    // Not current any more: the next scheduled run is not blocked by the held one.
    expect(row?.currentSyncId).toBeUndefined();
    const s3 = new S3Client({ ...awsClientConfig(moto.endpoint), forcePathStyle: true });
    const bucket = stack.outputs.ShardsBucketName as string;
    const heldKey = "guard/bl-guard/held.jsonl.gz";
    expect(
      (await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: heldKey }))).ContentLength,
    ).toBeGreaterThan(0);
    const list = await operator(["list"]);
    expect(list.stdout).toContain("bl-guard\tblackline\terror (The new snapshot was held");

    // Released as it is, under the held run's sync id, once.
    const release = await operator(["release", "bl-guard"]);
    expect(release.stderr).toBe("");
    expect(release.code).toBe(0);
    expect(lastJson(release.stdout)).toEqual({
      connectorId: "bl-guard",
      syncId: second,
      status: "released",
    });
    expect([...platform.uploads.keys()]).toEqual([first, second]);
    expect(platform.uploads.get(second)?.accepted).toBe(1);
    expect(usersIn(platform.uploads.get(second)?.text)).toBe(200);
    expect(platform.labels.at(-1)?.label).toBe("connected");
    expect(await registry.get("bl-guard")).toMatchObject({
      label: "connected",
      lastSyncStatus: "complete",
    });
    expect((await runs.get(second))?.status).toBe("complete");
    await expect(
      s3.send(new HeadObjectCommand({ Bucket: bucket, Key: heldKey })),
    ).rejects.toThrow();

    const again = await operator(["release", "bl-guard"]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("error: no snapshot of bl-guard is held");
    expect(platform.uploads.size).toBe(2);

    // The released snapshot is the one the next run is compared with: nothing removed, published.
    const third = lastJson((await operator(["sync", "bl-guard"])).stdout).syncId as string;
    await runQueues();
    expect([...platform.uploads.keys()]).toEqual([first, second, third]);
    expect(platform.labels.at(-1)?.label).toBe("connected");
    s3.destroy();
  });

  it("a later run within the limit publishes and supersedes the held snapshot", async () => {
    const put = await operator(["put-instance", "bl-super", "blackline"], envOf(full));
    const first = lastJson(put.stdout).syncId as string;
    await runQueues();
    await putSettings(shrunk, "bl-super");
    const held = lastJson((await operator(["sync", "bl-super"])).stdout).syncId as string;
    await runQueues();
    expect(platform.uploads.has(first)).toBe(true);
    expect(platform.uploads.has(held)).toBe(false);

    await putSettings(full, "bl-super");
    const later = lastJson((await operator(["sync", "bl-super"])).stdout).syncId as string;
    await runQueues();
    expect(platform.uploads.get(later)?.accepted).toBe(1);
    expect(platform.uploads.has(held)).toBe(false);
    const release = await operator(["release", "bl-super"]);
    expect(release.code).toBe(2);
    expect(lastJson(release.stdout)).toMatchObject({ status: "nothing_held" });
    expect(platform.uploads.has(held)).toBe(false);
    const row = await new InstanceRegistry(stack.outputs.InstancesTableName as string).get(
      "bl-super",
    );
    expect(row).toMatchObject({ label: "connected", lastSyncId: later });

    // `cloud runs`: its three runs, newest first, the held one with its reason.
    const listed = await operator(["runs", "bl-super"]);
    expect(listed.stderr).toBe("");
    expect(listed.code).toBe(0);
    const [header, ...rows] = listed.stdout.trim().split("\n");
    expect(header).toBe("started\tended\tstatus\tjobs\trecords\trequests\t429s\tsyncId\treason");
    const cells = rows.map((line) => line.split("\t"));
    expect(cells.map((c) => [c[2], c[7]])).toEqual([
      ["complete", later],
      ["held", held],
      ["complete", first],
    ]);
    expect(cells[1]?.[8]).toMatch(
      /^The new snapshot was held, not published: it removes 100 of 300 users/,
    );
    const started = cells.map((c) => c[0] as string);
    expect([...started].sort().reverse()).toEqual(started);
    for (const c of cells) expect((c[1] as string) >= (c[0] as string)).toBe(true);

    const json = await operator(["runs", "bl-super", "--limit", "2", "--json"]);
    const objects = json.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const store = new RunStore(stack.outputs.RunsTableName as string);
    expect(objects.map((o) => o.syncId)).toEqual([later, held]);
    for (const o of objects) {
      const run = await store.get(o.syncId);
      expect(o).toMatchObject({
        connector: "blackline",
        jobs: run?.jobsDone,
        records: run?.records,
        requests: run?.requests,
        upstream429s: 0,
      });
      expect(o.jobs).toBeGreaterThan(0);
      expect(o.requests).toBeGreaterThan(0);
    }

    const none = await operator(["runs", "bl-nobody"]);
    expect(none.stdout).toContain("bl-nobody: no runs on stage dev");
    const badLimit = await operator(["runs", "bl-super", "--limit", "0"]);
    expect(badLimit.code).toBe(2);
    expect(badLimit.stderr).toContain('--limit "0": give a whole number from 1 to 100');
  });

  it("emits, for the runs above, the metrics the dashboard graphs and the alarms watch", async () => {
    // Powertools' embedded metric format lines in the functions' output: what CloudWatch records.
    const emitted = emittedMetrics(stack.logs());
    const emittedKeys = new Set(emitted.map(metricKey));
    const graphed = [...graphedMetrics(await deployedDashboard(stack)).values()].flat();
    const ofRuns = graphed.filter((m) => m.namespace === "AccessConnectors");
    for (const name of [
      "runsCompleted",
      "runsHeld",
      "runDuration",
      "jobs",
      "records",
      "requests",
    ]) {
      const ref = ofRuns.find((m) => m.name === name);
      expect(ref, `${name} on the dashboard`).toBeDefined();
      expect(emittedKeys.has(metricKey(ref as MetricRef)), `${name} emitted as graphed`).toBe(true);
    }
    // Every metric the functions emit under the namespace is on the dashboard (cold starts aside).
    for (const m of emitted.filter((e) => e.name !== "ColdStart")) {
      expect(graphed.map(metricKey), m.name).toContain(metricKey(m));
    }
    // The alarm on held runs (moto skips alarms: the deployed template's).
    expect(emittedKeys.has(metricKey(alarmMetric(stack, "RunsHeldAlarm")))).toBe(true);
  });
}
