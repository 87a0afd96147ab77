/**
 * The scenarios of issue 8's table, and issue 16's limiter matrix: a tenant, what the simulator
 * enforces, and how the sync runs. Nothing is configured on the connector's side: its defaults are
 * what is measured.
 */
import type { TenantSize } from "../lib/simulators/blackline";
import type { LimiterSettings } from "../lib/simulators/limiters";
import type { QuotaSettings, RateLimitSettings } from "../lib/simulators/throttle";

/** What the simulator does: latency, its enforced limit, quota or limiter, its largest page. */
export interface UpstreamSpec {
  latencyMs: number;
  limit?: RateLimitSettings;
  quota?: QuotaSettings;
  /** A limiter of the catalogue (lib/simulators/README.md). */
  limiter?: LimiterSettings;
  /** BlackLine's `maxPageSize`, Valimail's `maxCount`; the simulator's default (1000) otherwise. */
  maxPageSize?: number;
}

export type SimulatorSpec =
  | { connector: "blackline"; size: TenantSize; upstream: UpstreamSpec }
  | { connector: "valimail"; users: number; upstream: UpstreamSpec };

export interface Scenario {
  name: string;
  /** In `npm run bench -- --quick`. */
  quick: boolean;
  runtime: "cli" | "cloud" | "service";
  simulator: SimulatorSpec;
  /** The tenant and the simulator, as the table says them. */
  tenantText: string;
  upstreamText: string;
  /**
   * A scale run: no concurrency-1 run (it adds only minutes); instead the sync runs once more onto
   * the first run's snapshot, so the removal guard compares the two, as every scheduled sync after
   * the first does (`ScenarioResult.guarded`).
   */
  once?: boolean;
  /**
   * In the limiter matrix (`-- --matrix`): run once (no concurrency-1 run), reported in a table of
   * its own, its floor from the limiter (bench/floors.ts).
   */
  matrix?: boolean;
  /**
   * In the limiter matrix: what an administrator who knew the limiter would configure, run once
   * more beside the learned run, so a miss is split between rate control and the client's own
   * costs (its start, each answer's way back, the chains of pages).
   */
  told?: Record<string, string>;
}

/** 10,000 users, 500 teams, 50 roles; each user in 0 to 6 teams, about 3 on average. */
export const BLACKLINE_10K: TenantSize = {
  users: 10_000,
  teams: 500,
  roles: 50,
  maxTeamsPerUser: 6,
};
const BLACKLINE_100K: TenantSize = { users: 100_000, teams: 2_000, roles: 50, maxTeamsPerUser: 6 };
/** Issue 37's tenant for flat memory: about 3.5 million grants. */
const BLACKLINE_1M: TenantSize = {
  users: 1_000_000,
  teams: 20_000,
  roles: 50,
  maxTeamsPerUser: 6,
};
const BLACKLINE_20K: TenantSize = { users: 20_000, teams: 400, roles: 50, maxTeamsPerUser: 6 };
const LIMIT_50: RateLimitSettings = { requestsPerSecond: 50 };
/** `-- --tenants` (bench/cloudTenants.ts): a large and a small tenant on one cloud stage. */
export const TENANTS_LARGE: TenantSize = {
  users: 50_000,
  teams: 1_000,
  roles: 50,
  maxTeamsPerUser: 6,
};
export const TENANTS_SMALL: TenantSize = { users: 500, teams: 20, roles: 10, maxTeamsPerUser: 6 };
/** A tenant of `users` in the large tenant's shape (a team per 50 users), for `--large`/`--small`. */
export const tenantOf = (users: number): TenantSize => ({
  users,
  teams: Math.max(1, Math.ceil(users / 50)),
  roles: Math.min(50, Math.max(1, Math.ceil(users / 50))),
  maxTeamsPerUser: 6,
});

export const SCENARIOS: Scenario[] = [
  {
    name: "blackline-10k",
    quick: true,
    runtime: "cli",
    simulator: {
      connector: "blackline",
      size: BLACKLINE_10K,
      upstream: { latencyMs: 40, limit: LIMIT_50, maxPageSize: 137 },
    },
    tenantText: "10,000 users, 500 teams, 50 roles, ~3 teams per user",
    upstreamText: "40 ms, 50 req/s, page cap 137",
  },
  {
    name: "blackline-100k",
    quick: false,
    runtime: "cli",
    simulator: {
      connector: "blackline",
      size: BLACKLINE_100K,
      upstream: { latencyMs: 40, limit: LIMIT_50 },
    },
    tenantText: "100,000 users, 2,000 teams, 50 roles, ~3 teams per user",
    upstreamText: "40 ms, 50 req/s",
  },
  {
    name: "blackline-100k-unlimited",
    quick: false,
    runtime: "cli",
    simulator: { connector: "blackline", size: BLACKLINE_100K, upstream: { latencyMs: 40 } },
    tenantText: "as blackline-100k",
    upstreamText: "40 ms, no rate limit",
  },
  {
    name: "blackline-1m-unlimited",
    quick: false,
    once: true,
    runtime: "cli",
    // No latency: the sync's own work, which is what grows with the tenant, is what is measured.
    simulator: { connector: "blackline", size: BLACKLINE_1M, upstream: { latencyMs: 0 } },
    tenantText: "1,000,000 users, 20,000 teams, 50 roles, ~3 teams per user",
    upstreamText: "no latency, no rate limit",
  },
  {
    name: "blackline-1m-service",
    quick: false,
    runtime: "service",
    simulator: { connector: "blackline", size: BLACKLINE_1M, upstream: { latencyMs: 0 } },
    tenantText: "as blackline-1m-unlimited, by the service: a sync at start, then a sync task",
    upstreamText: "as blackline-1m-unlimited",
  },
  {
    name: "blackline-quota",
    quick: false,
    runtime: "cli",
    simulator: {
      connector: "blackline",
      size: BLACKLINE_10K,
      // Pages of 25 make the sync need about 2,000 requests, so the quota blocks it (at 1,000).
      upstream: { latencyMs: 40, quota: { requests: 1_000, blockSeconds: 90 }, maxPageSize: 25 },
    },
    tenantText: "as blackline-10k",
    upstreamText: "40 ms, page cap 25, 429 without Retry-After for 90 s after every 1,000 requests",
  },
  {
    name: "valimail-5k",
    quick: true,
    runtime: "cli",
    simulator: {
      connector: "valimail",
      users: 5_000,
      upstream: { latencyMs: 40, limit: { requestsPerSecond: 20 } },
    },
    tenantText: "5,000 users",
    upstreamText: "40 ms, 20 req/s",
  },
  {
    name: "blackline-10k-cloud",
    quick: false,
    runtime: "cloud",
    simulator: {
      connector: "blackline",
      size: BLACKLINE_10K,
      upstream: { latencyMs: 40, limit: LIMIT_50, maxPageSize: 137 },
    },
    tenantText: "as blackline-10k, through the cloud runtime on moto_server",
    upstreamText: "as blackline-10k",
  },
  {
    name: "blackline-20k-cloud",
    quick: false,
    runtime: "cloud",
    simulator: { connector: "blackline", size: BLACKLINE_20K, upstream: { latencyMs: 40 } },
    tenantText: "20,000 users, 400 teams, 50 roles, through the cloud runtime, 10 workers",
    upstreamText: "40 ms, no rate limit",
  },
  {
    name: "blackline-100k-cloud",
    quick: false,
    runtime: "cloud",
    simulator: { connector: "blackline", size: BLACKLINE_100K, upstream: { latencyMs: 40 } },
    tenantText: "as blackline-100k, through the cloud runtime, 10 workers",
    upstreamText: "40 ms, no rate limit",
  },
  ...limiterMatrix(),
];

/**
 * Issue 16's limiter matrix: blackline-10k's tenant and page cap behind each limiter kind of the
 * catalogue at 50 requests/s and 40 ms. A fixed window allows 50 x its seconds; the cap in flight
 * is 2, which at 40 ms a request is 50 requests/s.
 */
function limiterMatrix(): Scenario[] {
  const bucket = (burst: number) =>
    ({ kind: "token_bucket", ratePerSecond: 50, burst }) as const satisfies LimiterSettings;
  const window = (seconds: number) =>
    ({ kind: "fixed_window", limit: 50 * seconds, windowSeconds: seconds }) as const;
  const rate = (n: number) => ({ CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: String(n) });
  // A window longer than a second: no client ceiling, so its allowance goes at once (as the floor).
  const unpaced = rate(0);
  const kinds: [string, LimiterSettings, string, Scenario["told"], number?][] = [
    ["bucket-1", bucket(1), "token bucket 50/s, burst 1", rate(50)],
    ["bucket-5", bucket(5), "token bucket 50/s, burst 5", rate(50)],
    ["bucket-50", bucket(50), "token bucket 50/s, burst 50", rate(50)],
    [
      "bucket-50-no-retry-after",
      { ...bucket(50), retryAfter: "none" },
      "token bucket 50/s, burst 50, 429 without Retry-After",
      rate(50),
    ],
    [
      "bucket-50-retry-date",
      { ...bucket(50), retryAfter: "date" },
      "token bucket 50/s, burst 50, Retry-After as a date",
      rate(50),
    ],
    [
      "bucket-50-ratelimit-headers",
      { ...bucket(50), retryAfter: "none", headers: "ratelimit" },
      "token bucket 50/s, burst 50, RateLimit-Limit/-Remaining/-Reset and no Retry-After",
      rate(50),
    ],
    ["window-1s", window(1), "fixed window of 50 per 1 s", rate(50)],
    ["window-10s", window(10), "fixed window of 500 per 10 s", unpaced],
    ["window-60s", window(60), "fixed window of 3,000 per 60 s", unpaced],
    [
      "sliding-log",
      { kind: "sliding_log", limit: 50, windowSeconds: 1 },
      "sliding log of 50 per 1 s (refusals count)",
      rate(50),
    ],
    [
      "in-flight-2",
      { kind: "in_flight", maxInFlight: 2 },
      "at most 2 requests in flight",
      {
        CONNECTOR_ACCOUNTING_MAX_CONCURRENCY: "2",
        CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0",
      },
    ],
    // Answers that take long: the controller hears of an overshoot 200 ms late.
    [
      "bucket-50-200ms",
      { ...bucket(50), retryAfter: "none" },
      "token bucket 50/s, burst 50, 429 without Retry-After",
      rate(50),
      200,
    ],
  ];
  return kinds.map(([name, limiter, text, told, latencyMs = 40]) => ({
    name: `limiter-${name}`,
    quick: false,
    runtime: "cli",
    matrix: true,
    simulator: {
      connector: "blackline",
      size: BLACKLINE_10K,
      upstream: { latencyMs, limiter, maxPageSize: 137 },
    },
    tenantText: "as blackline-10k",
    upstreamText: `${latencyMs} ms, page cap 137, ${text}`,
    told,
  }));
}
