// Preloaded into a measured process (NODE_OPTIONS=--import): on exit, writes the process's peak
// resident set size in bytes to the file BENCH_PEAK_RSS_FILE names. VmHWM from /proc where there
// is one (Linux), process.resourceUsage().maxRSS elsewhere.
import { readFileSync, writeFileSync } from "node:fs";

const target = process.env.BENCH_PEAK_RSS_FILE;

function peakRssBytes() {
  try {
    const kib = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
    if (kib) return Number(kib) * 1024;
  } catch {
    // no /proc: fall through
  }
  return process.resourceUsage().maxRSS * 1024;
}

if (target) process.on("exit", () => writeFileSync(target, String(peakRssBytes())));
