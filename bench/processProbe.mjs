// Preloaded into a measured process (NODE_OPTIONS=--import): on exit, writes to the file
// BENCH_PROCESS_FILE names `{ peakRssBytes, cpuMs }`: the peak resident set size (VmHWM from
// /proc where there is one, process.resourceUsage().maxRSS elsewhere) and the CPU time used, and
// `atPeak`: memoryUsage() sampled every 50 ms at the highest RSS seen, with the ms since start
// (where the peak falls, and whether V8's heap or buffers outside it make it).
import { readFileSync, writeFileSync } from "node:fs";

const target = process.env.BENCH_PROCESS_FILE;

function peakRssBytes() {
  try {
    const kib = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
    if (kib) return Number(kib) * 1024;
  } catch {
    // no /proc: fall through
  }
  return process.resourceUsage().maxRSS * 1024;
}

const MIB = 1024 * 1024;
const began = performance.now();
let atPeak = { ms: 0, rssMiB: 0, heapMiB: 0, heapTotalMiB: 0, externalMiB: 0, arrayBuffersMiB: 0 };

if (target) {
  setInterval(() => {
    const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
    if (rss / MIB <= atPeak.rssMiB) return;
    const mib = (bytes) => Math.round((bytes / MIB) * 10) / 10;
    atPeak = {
      ms: Math.round(performance.now() - began),
      rssMiB: mib(rss),
      heapMiB: mib(heapUsed),
      heapTotalMiB: mib(heapTotal),
      externalMiB: mib(external),
      arrayBuffersMiB: mib(arrayBuffers),
    };
  }, 50).unref();
  process.on("exit", () => {
    const { userCPUTime, systemCPUTime } = process.resourceUsage();
    const cpuMs = (userCPUTime + systemCPUTime) / 1000;
    writeFileSync(target, JSON.stringify({ peakRssBytes: peakRssBytes(), cpuMs, atPeak }));
  });
}
