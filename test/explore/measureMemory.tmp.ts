import { openExplore } from "../../lib/explore";
import { listAccounts } from "../../lib/explore/accountViews";
import { accountsQuery } from "../../lib/explore/apiSchemas";
const mem = (what: string) => {
  const m = process.memoryUsage();
  const mib = (x: number) => (x / 2 ** 20).toFixed(0);
  console.log(what, "rss", mib(m.rss), "heap", mib(m.heapUsed), "external", mib(m.external), "arrayBuffers", mib(m.arrayBuffers), "peak", (process.resourceUsage().maxRSS / 1024).toFixed(0));
};
mem("start");
const c0 = process.cpuUsage();
const { explore } = await openExplore(process.argv[2] as string);
console.log("open cpu ms", (process.cpuUsage(c0).user + process.cpuUsage(c0).system) / 1000);
mem("opened");
globalThis.gc?.();
mem("after gc");
for (const q of ["", "ada", "example", "zzz-nothing", "u4242"]) {
  for (const sort of ["name", "login"] as const) {
    const c = process.cpuUsage();
    const t = performance.now();
    const r = listAccounts(explore, accountsQuery.parse({ q, sort }));
    console.log(`q=${q} sort=${sort} total ${r.total} cpu ${(process.cpuUsage(c).user / 1000).toFixed(0)} ms wall ${(performance.now() - t).toFixed(0)} ms`);
  }
}
mem("searched");
