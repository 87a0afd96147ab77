/**
 * The worker thread `buildApart` starts (bundled as dist/explore-index-worker.js): builds one
 * index and answers once.
 */
import { parentPort, workerData } from "node:worker_threads";
import { type ApartAnswer, type ApartRequest, failureOf } from "./buildApart";
import { buildIndexFile } from "./buildIndex";
import { privilegedFor } from "./connectorOf";

const { snapshot, path, search } = workerData as ApartRequest;
let answer: ApartAnswer;
try {
  await buildIndexFile(snapshot, path, privilegedFor, { search });
  answer = { built: true };
} catch (error) {
  answer = { failed: failureOf(error) };
}
parentPort?.postMessage(answer);
