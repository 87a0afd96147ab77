/**
 * A thread of finalize's shard workers (`ShardWorkers`; bundled beside finalize's handler as
 * shard-worker.mjs, scripts/package-functions.mjs): makes each shard it is sent ready to write
 * (`preparePage`) and answers in the order asked.
 */
import { Readable } from "node:stream";
import { parentPort } from "node:worker_threads";
import { lineBatches } from "../snapshot/lineBatches";
import { preparePage } from "../snapshot/preparedPage";
import { RecordHashes } from "../snapshot/recordHashes";
import { failureOf, type ShardAnswer, type ShardRequest } from "./shardWorkers";

const hashes = new RecordHashes();
let turn: Promise<void> = Promise.resolve();
parentPort?.on("message", ({ id, chunks }: ShardRequest) => {
  turn = turn.then(async () => {
    let answer: ShardAnswer;
    try {
      const lines: string[] = [];
      for await (const batch of lineBatches(Readable.from(chunks))) {
        for (const line of batch) lines.push(line);
      }
      answer = { id, page: preparePage(lines, hashes) };
    } catch (error) {
      answer = { id, failed: failureOf(error) };
    }
    parentPort?.postMessage(answer);
  });
});
