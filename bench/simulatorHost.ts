/**
 * A simulator in a process of its own, so the sync's process holds only the sync: started with a
 * `SimulatorSpec` (JSON, first argument), it prints one line, `SimulatorReady`, then serves until
 * its stdin ends, and prints one more line, `SimulatorStats`, before it exits.
 */
import { once } from "node:events";
import {
  type BlacklineSimulator,
  startBlacklineSimulator,
  type Tenant,
} from "../lib/simulators/blackline";
import { parseLimiterSettings } from "../lib/simulators/limiters/settings";
import { startValimailSimulator } from "../lib/simulators/valimail";
import { PAGES_AHEAD } from "../lib/sync/paging";
import type { SimulatorSpec, UpstreamSpec } from "./scenarios";

export interface MinimumRequests {
  /** Pages of each list and membership pages from the smaller side, at the server's largest page. */
  total: number;
  parts: Record<string, number>;
  /**
   * The longest chain of round trips, one after another: a list's pages (its first, then the rest
   * `PAGES_AHEAD` + 1 a round trip, asked for ahead once the first gave the total), or a list's
   * pages up to an item's and then that item's membership pages (one a round trip).
   */
  chainRoundTrips: number;
}

export interface SimulatorReady {
  url: string;
  env: Record<string, string>;
  minimum: MinimumRequests;
}

export interface SimulatorStats {
  requests: number;
  /** Answered 429 by the enforced limit or quota. */
  throttled: number;
  byRoute: Record<string, number>;
  /** From the first request's arrival to the last's (BlackLine; the Valimail simulator keeps no arrivals). */
  spanMs?: number;
  /** The simulator's own time per answer, arrival to last byte, on average (BlackLine). */
  meanAnswerMs?: number;
}

/** The simulators' largest page when none is set. */
const DEFAULT_MAX_PAGE = 1000;

/**
 * Round trips to read a list's first `pages` pages: the first, then `PAGES_AHEAD` and one at a
 * time (each page's job asks for the next `PAGES_AHEAD` as it starts).
 */
const listRoundTrips = (pages: number) => 1 + Math.ceil((pages - 1) / (PAGES_AHEAD + 1));

/** Pages to read `items` at `pageSize` a page; an empty list still takes one request. */
const pages = (items: number, pageSize: number) => Math.max(1, Math.ceil(items / pageSize));

/** Computed from the tenant, not from a run: what any client needs at the server's largest page. */
function blacklineMinimum(tenant: Tenant, upstream: UpstreamSpec): MinimumRequests {
  const cap = upstream.maxPageSize ?? DEFAULT_MAX_PAGE;
  const byUser = tenant.users.length < tenant.teams.length;
  const sides = byUser ? tenant.userTeams : tenant.teamMembers;
  let memberships = 0;
  for (const members of sides.values()) memberships += pages(members.length, cap);
  // The side's items in list order: item i is on page floor(i / cap) + 1, then its own pages.
  const sideIds = byUser ? tenant.users.map((u) => u.id) : tenant.teams.map((t) => t.id);
  let membershipChain = 0;
  sideIds.forEach((id, i) => {
    const own = pages(sides.get(id)?.length ?? 0, cap);
    membershipChain = Math.max(membershipChain, listRoundTrips(Math.floor(i / cap) + 1) + own);
  });
  const parts = {
    users: pages(tenant.users.length, cap),
    teams: pages(tenant.teams.length, cap),
    roles: pages(tenant.roles.length, cap),
    [byUser ? "user_teams" : "team_users"]: memberships,
  };
  return {
    total: Object.values(parts).reduce((a, b) => a + b, 0),
    parts,
    chainRoundTrips: Math.max(
      listRoundTrips(parts.users),
      listRoundTrips(parts.teams),
      listRoundTrips(parts.roles),
      membershipChain,
    ),
  };
}

function faultsOf(upstream: UpstreamSpec) {
  return {
    latencyMs: upstream.latencyMs,
    ...(upstream.limit ? { limit: upstream.limit } : {}),
    ...(upstream.quota ? { quota: upstream.quota } : {}),
    // Parsed here, so a bad setting stops the host before it says it is ready.
    ...(upstream.limiter
      ? { limiter: parseLimiterSettings(upstream.limiter, "upstream.limiter") }
      : {}),
  };
}

async function start(spec: SimulatorSpec) {
  if (spec.connector === "blackline") {
    const sim: BlacklineSimulator = await startBlacklineSimulator({
      seed: 1,
      size: spec.size,
      faults: faultsOf(spec.upstream),
      ...(spec.upstream.maxPageSize ? { maxPageSize: spec.upstream.maxPageSize } : {}),
    });
    return { sim, minimum: blacklineMinimum(sim.tenant, spec.upstream) };
  }
  const sim = await startValimailSimulator({
    seed: 1,
    users: spec.users,
    faults: faultsOf(spec.upstream),
    ...(spec.upstream.maxPageSize ? { maxCount: spec.upstream.maxPageSize } : {}),
  });
  const list = pages(spec.users, spec.upstream.maxPageSize ?? DEFAULT_MAX_PAGE);
  return {
    sim,
    minimum: { total: list, parts: { users: list }, chainRoundTrips: listRoundTrips(list) },
  };
}

const spec = JSON.parse(process.argv[2] ?? "") as SimulatorSpec;
const { sim, minimum } = await start(spec);
const ready: SimulatorReady = { url: sim.url, env: sim.env(), minimum };
process.stdout.write(`${JSON.stringify(ready)}\n`);
process.stdin.resume();
await once(process.stdin, "end");
const stats: SimulatorStats = {
  requests: sim.stats.requests,
  throttled: sim.stats.throttled,
  byRoute: sim.stats.byRoute,
  ...("arrivals" in sim.stats
    ? { spanMs: (sim.stats.arrivals.at(-1) ?? 0) - (sim.stats.arrivals[0] ?? 0) }
    : {}),
  ...("meanAnswerMs" in sim.stats && sim.stats.meanAnswerMs !== undefined
    ? { meanAnswerMs: sim.stats.meanAnswerMs }
    : {}),
};
process.stdout.write(`${JSON.stringify(stats)}\n`);
await sim.close();
