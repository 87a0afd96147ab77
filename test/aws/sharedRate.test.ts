// The rate an instance's workers share (lib/cloud/aws/sharedRate.ts, slotBook.ts): slots of a
// clock in the runs table claimed in blocks, at lib/rate's pace, on moto_server. Each `SlotBook` stands for one
// worker's process.

import { DeleteCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { awsClients } from "../../lib/cloud/aws/clients";
import { readRate } from "../../lib/cloud/aws/rateItems";
import { SlotBook, type SlotPermit } from "../../lib/cloud/aws/slotBook";
import { unfolded } from "../../lib/cloud/rateFold";
import { silentLogger } from "../../lib/logging";
import { type Moto, startMotoWithPkSkTable } from "./harness";

const TABLE = "runs";
let moto: Moto;

beforeAll(async () => {
  moto = await startMotoWithPkSkTable(TABLE);
});

afterAll(async () => {
  await moto?.stop();
});

/** `count` permits of `worker` asked at once, each answered accepted as soon as it starts. */
function permits(worker: SlotBook, count: number): Promise<SlotPermit[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const permit = await worker.permit();
      permit.accepted();
      return permit;
    }),
  );
}

const writes = (workers: SlotBook[]) =>
  workers.reduce((sum, w) => sum + w.counts.claims + w.counts.folds, 0);

describe("the shared rate's slots", () => {
  it("never give concurrent workers more starts than the pace in any second, claimed in blocks", async () => {
    const workers = Array.from(
      { length: 3 },
      () => new SlotBook(TABLE, "rate#paced", { requestsPerSecond: 10 }),
    );
    const taken = (await Promise.all(workers.map((w) => permits(w, 8)))).flat();
    const slots = taken.map((p) => p.slot).sort((a, b) => a - b);
    expect(new Set(slots).size).toBe(24);
    for (const slot of slots) {
      expect(slots.filter((t) => t >= slot && t < slot + 1000).length).toBeLessThanOrEqual(10);
    }
    // Blocks: fewer writes to the store than starts (claims lost to another worker included).
    expect(writes(workers)).toBeLessThan(slots.length);
  });

  it("hold every worker on a 429 with a long Retry-After", async () => {
    const [first, second] = [1, 2].map(() => new SlotBook(TABLE, "rate#held", {})) as [
      SlotBook,
      SlotBook,
    ];
    await permits(second, 1);
    const permit = await first.permit();
    const refusedAt = Date.now();
    await permit.refused(3_000);
    const [next] = await permits(second, 1);
    expect(next?.slot).toBeGreaterThanOrEqual(refusedAt + 3_000);
  });

  it("log each move of the shared model at debug, as the command line's limiter does", async () => {
    const lines: { message: string; fields?: Record<string, unknown> }[] = [];
    const logger = {
      ...silentLogger,
      debug: (message: string, fields?: Record<string, unknown>) => lines.push({ message, fields }),
    };
    const worker = new SlotBook(TABLE, "rate#logged", { requestsPerSecond: 10 }, logger);
    await permits(worker, 2);
    await (await worker.permit()).refused(3_000);
    expect(lines).toEqual([
      {
        message: "learned rate moved",
        fields: expect.objectContaining({ moved: expect.stringContaining("blocked"), refusals: 1 }),
      },
    ]);
  });

  it("move the slots another worker claimed before a 429's hold to the hold's end", async () => {
    const settings = { requestsPerSecond: 10 };
    const [first, second] = [1, 2].map(() => new SlotBook(TABLE, "rate#moved", settings)) as [
      SlotBook,
      SlotBook,
    ];
    const permit = await first.permit();
    // The second worker claims eight slots, 100 to 800 ms after the first's, in two blocks.
    const later = Promise.all(Array.from({ length: 8 }, () => second.permit()));
    for (let tries = 0; second.counts.slots < 8 && tries < 400; tries++) {
      await new Promise((r) => setTimeout(r, 5));
    }
    const refusedAt = Date.now();
    await permit.refused(3_000);
    const foldedAt = Date.now();
    const slots = (await later).map((p) => p.slot);
    // A slot reads the clock again a round trip (100 ms at most) and 30 ms before it, and that
    // read may take a round trip more: a slot due later than 230 ms after the fold's end starts
    // after the hold. Timed from the fold's end, not by the slot's number (300 ms on was moved,
    // until a loaded machine's fold took longer).
    const moved = slots.filter((slot) => slot >= refusedAt + 3_000);
    expect(slots.filter((slot) => slot > foldedAt + 230 && !moved.includes(slot))).toEqual([]);
    expect(moved.length).toBeGreaterThan(0);
  });

  it("take in every worker's 429 once, whichever worker's fold takes it", async () => {
    // Five workers refused at once tell their 429s to the inbox with a write no condition refuses;
    // a fold takes in every 429 told by then, so the others find theirs folded. Each folding on
    // its own, the five wrote the model in a line, each losing to the one before: 429s were
    // folded up to 2.4 s after they came.
    const settings = { requestsPerSecond: 20 };
    const workers = Array.from({ length: 5 }, () => new SlotBook(TABLE, "rate#inbox", settings));
    const held = await Promise.all(workers.map((w) => w.permit()));
    await Promise.all(held.map((p) => p.refused(undefined)));
    const read = await readRate({ table: TABLE, pk: "rate#inbox" }, settings, Date.now());
    expect(read.shared.refusalsFolded).toBe(5);
    expect(read.shared.model.levels.filter((l) => l.refused)).toHaveLength(5);
    expect(unfolded(read.shared, read.inbox)).toEqual([]);
  });

  it("go on from a clock item written before the schedule kept its past pieces", async () => {
    // A stage upgraded while its items live (an hour): the clock has no `past`. Unread, the first
    // claim's condition failed on it every time, and no request started until the item expired.
    const now = Date.now();
    await awsClients().dynamo.send(
      new PutCommand({
        TableName: TABLE,
        Item: { pk: "rate#older", sk: "clock", nextSlot: now - 5_000, pace: 20, claimed: 40 },
      }),
    );
    await awsClients().dynamo.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: { pk: "rate#older", sk: "clock" },
        UpdateExpression: "SET fromSlot = :s, fromAt = :a, foldedAt = :a, folds = :f",
        ExpressionAttributeValues: { ":s": 0, ":a": now - 7_000, ":f": 3 },
      }),
    );
    const worker = new SlotBook(TABLE, "rate#older", {});
    const [permit] = await permits(worker, 1);
    expect(permit?.slot).toBeGreaterThanOrEqual(now);
    const { clock } = await readRate({ table: TABLE, pk: "rate#older" }, {}, Date.now());
    expect(clock?.past).toEqual([0, now - 7_000, 20]);
  });

  it("claim again once the clock item is gone (expired), from the worker's older view", async () => {
    // A warm worker's view outlives the item: its restart claim, conditioned on that view, failed
    // for good and sent a failing write after another until each request gave up.
    const worker = new SlotBook(TABLE, "rate#gone", { requestsPerSecond: 20 });
    await permits(worker, 2);
    await awsClients().dynamo.send(
      new DeleteCommand({ TableName: TABLE, Key: { pk: "rate#gone", sk: "clock" } }),
    );
    await new Promise((r) => setTimeout(r, 700));
    const deletedAt = Date.now();
    const [permit] = await permits(worker, 1);
    expect(permit?.slot).toBeGreaterThanOrEqual(deletedAt - 100);
    expect(worker.counts.lostClaims).toBeLessThanOrEqual(2);
  });

  it("take in as accepted only the slots whose answers have had time to come", async () => {
    // Four answers come 1 s after their slots; then four requests start, the last refused at
    // once. A 429 folded at once took every slot started by then for accepted, those whose 429s
    // were still on their way too: the model measured more accepted than the upstream did (a
    // window of 10 taken for 16, 70-78 refusals in a cloud run).
    const settings = { requestsPerSecond: 10 };
    const worker = new SlotBook(TABLE, "rate#answered", settings);
    await Promise.all(
      [1, 2, 3, 4].map(async () => {
        const permit = await worker.permit();
        await new Promise((r) => setTimeout(r, Math.max(0, permit.slot + 1_000 - Date.now())));
        permit.accepted();
      }),
    );
    const waiting = await Promise.all([1, 2, 3, 4].map(() => worker.permit()));
    const last = waiting.at(-1) as SlotPermit;
    await last.refused(undefined);
    const { shared } = await readRate({ table: TABLE, pk: "rate#answered" }, settings, Date.now());
    // The four answered, and at most one of the four started since (a late permit's slot).
    expect(shared.startedFolded).toBeGreaterThanOrEqual(4);
    expect(shared.startedFolded).toBeLessThanOrEqual(5);
  });

  it("spread a first fold's slots from the clock's first claim, not at the pace", async () => {
    // Six requests 300 ms apart (the workers' demand at first, under the upstream's limit), then a
    // 429. Spread at startup's pace (20 a second), the six and the slots claimed ahead of them
    // read as 24-28 a second accepted; spread from the first claim, as 6.
    const worker = new SlotBook(TABLE, "rate#first", {});
    for (let i = 0; i < 6; i++) {
      (await worker.permit()).accepted();
      await new Promise((r) => setTimeout(r, 300));
    }
    await (await worker.permit()).refused(undefined);
    const { shared } = await readRate({ table: TABLE, pk: "rate#first" }, {}, Date.now());
    expect(shared.model.startup).toBe(false);
    expect(shared.model.estimate).toBeLessThanOrEqual(12);
  });

  it("begin a claim's slots a store round trip after it is sent, not at its sending", async () => {
    // One request at a time, each after the clock has stood (600 ms: past the horizon, so each
    // claims one slot and starts the schedule again). From the claim's own time, every slot was
    // due before its claim came back, and started late by the round trip: next to the slot after
    // it, in a fixed window that opened at it. Compared as times of the schedule, not as the
    // starts' own (a loaded machine's timers are late by more than moto's round trip).
    const worker = new SlotBook(TABLE, "rate#trip", { requestsPerSecond: 20 });
    let ahead = 0;
    for (let i = 0; i < 16; i++) {
      const asked = Date.now();
      const permit = await worker.permit();
      permit.accepted();
      // The first four teach the worker the store's round trip (2 ms at least on loopback).
      if (i >= 4 && permit.slot >= asked + 2) ahead++;
      await new Promise((r) => setTimeout(r, 600));
    }
    expect(ahead).toBeGreaterThanOrEqual(10);
  });
});
