// Preloaded into a measured process (NODE_OPTIONS=--import): on exit, writes to the file
// BENCH_PROCESS_FILE names `{ peakRssBytes, cpuMs }`: the peak resident set size (VmHWM from
// /proc where there is one, process.resourceUsage().maxRSS elsewhere) and the CPU time used.
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

if (target) {
  process.on("exit", () => {
    const { userCPUTime, systemCPUTime } = process.resourceUsage();
    const cpuMs = (userCPUTime + systemCPUTime) / 1000;
    writeFileSync(target, JSON.stringify({ peakRssBytes: peakRssBytes(), cpuMs }));
  });
}
