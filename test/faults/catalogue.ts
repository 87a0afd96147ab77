/**
 * The faults of the matrix (issue 9, item 5): what each injects into the simulators, what the
 * product does about it, and what a failed run's reason must say. Every fault that hits requests
 * is decided per request from the seed (lib/simulators/faultSchedule.ts), so a run with a given
 * seed gives the same answer whatever the runtime, the concurrency or the machine's speed.
 */
import type { FaultSchedule, ScheduledFault } from "../../lib/simulators/faultSchedule";
import type { FaultSettings } from "../../lib/simulators/faults";

export type Runtime = "cli" | "service" | "cloud";
export type ConnectorName = "blackline" | "valimail";
export const RUNTIMES: readonly Runtime[] = ["cli", "service", "cloud"];
export const CONNECTORS: readonly ConnectorName[] = ["blackline", "valimail"];

/** What a run of the cell must end with: a snapshot equal to the clean one, a loud failure, or either. */
export type Expectation = "exact" | "failed" | "either";

export interface FaultCase {
  id: string;
  /** What is injected. */
  injects: string;
  /** What the product does about it. */
  handling: string;
  settings(seed: number): FaultSettings;
  /** A failed run's reason must match this: it names the fault's cause. */
  reason: RegExp;
  /** Per runtime; `either` where the outcome depends on which requests the seed hits. */
  expect: Record<Runtime, Expectation>;
}

/** The client-side per-request timeout the runs use, and a delay well beyond it. */
export const REQUEST_TIMEOUT_MS = 2_000;
const SLOW_MS = 3_500;
/** The response size cap the runs set (CONNECTOR_<APP>_MAX_RESPONSE_MIB=1; the default is 64 MiB). */
export const RESPONSE_CAP_BYTES = 2 ** 20;

const LISTS = /^GET \//;
const TOKEN = /^POST \/(auth|authorize\/connect\/token)$/;

function scheduled(
  fault: ScheduledFault,
  share: number,
  attempts: number,
  match?: RegExp,
): (seed: number) => FaultSettings {
  return (seed) => {
    const schedule: FaultSchedule = { seed, share, attempts, fault, ...(match ? { match } : {}) };
    return { schedule };
  };
}

const everywhere = (expectation: Expectation): Record<Runtime, Expectation> => ({
  cli: expectation,
  service: expectation,
  cloud: expectation,
});

export const FAULTS: readonly FaultCase[] = [
  {
    id: "429 storm, Retry-After",
    injects:
      "20% of requests answered 429 with `Retry-After: 1` on their first two attempts (the token request included)",
    handling:
      "waits the Retry-After (CLI and service: every request of the run pauses; cloud: the job goes back to the queue with that delay) and tries again",
    settings: scheduled({ kind: "status429", retryAfterSeconds: 1 }, 0.2, 2),
    reason: /answered 429|rate limited|slow down/,
    expect: everywhere("exact"),
  },
  {
    id: "429 storm, no Retry-After",
    injects:
      "10% of requests answered 429 without Retry-After on their first six attempts: more than the retry budget of a 5xx",
    handling:
      "waits with a backoff of its own, within the rate-limit wait budget (not the attempts of a 5xx), and lowers its request rate; a request still refused when the budget is spent fails the run",
    settings: scheduled({ kind: "status429" }, 0.1, 6),
    reason: /answered 429|rate limited|slow down/,
    expect: everywhere("exact"),
  },
  {
    id: "5xx bursts",
    injects: "30% of requests answered 502, 503 and 504 on their first three attempts",
    handling:
      "retries a GET (and the token request) with exponential backoff and jitter, six attempts in all (cloud: three, then the queue delivers the job again)",
    settings: scheduled({ kind: "status5xx" }, 0.3, 3),
    reason: /answered 50[234]/,
    expect: everywhere("exact"),
  },
  {
    id: "dropped connections",
    injects: "30% of requests have their connection closed without an answer, twice",
    handling: "a network error: retried as a 5xx is",
    settings: scheduled({ kind: "drop" }, 0.3, 2),
    reason: /got no answer/,
    expect: everywhere("exact"),
  },
  {
    id: "slower than the timeout",
    injects: `20% of requests answered only after ${SLOW_MS} ms, beyond the ${REQUEST_TIMEOUT_MS} ms per-request timeout, once`,
    handling:
      "the per-request deadline (headers and body) aborts the request; it is retried as a network error",
    settings: scheduled({ kind: "slow", delayMs: SLOW_MS }, 0.2, 1),
    reason: /no complete answer within \d+ ms/,
    expect: everywhere("exact"),
  },
  {
    id: "body cut off",
    injects:
      "30% of answers announce their whole length, send half of the JSON and close the connection, twice",
    handling: "the body ends early: a network error, retried",
    settings: scheduled({ kind: "cutBody" }, 0.3, 2),
    reason: /got no answer/,
    expect: everywhere("exact"),
  },
  {
    id: "truncated JSON",
    injects:
      "20% of answers are complete HTTP answers (status 200, length as sent) whose JSON stops halfway",
    handling:
      "the body does not parse: the run fails at once (a retry would read the same answer), naming the request",
    settings: scheduled({ kind: "truncatedJson" }, 0.2, 1),
    reason: /not valid JSON/,
    expect: everywhere("either"),
  },
  {
    id: "body over the cap",
    injects: `10% of requests answered 200 with a JSON body of ${RESPONSE_CAP_BYTES + 1024} bytes, over the 1 MiB response size cap`,
    handling:
      "reading stops at the cap and the connection is dropped (at most the cap in memory); the run fails naming the cap",
    settings: scheduled({ kind: "oversize", bytes: RESPONSE_CAP_BYTES + 1024 }, 0.1, 1),
    reason: /response size cap/,
    expect: everywhere("either"),
  },
  {
    id: "schema: missing id",
    injects: "30% of list pages have their first item without `id`",
    handling: "parsed with zod at the boundary: the run fails naming the item's path and field",
    settings: scheduled({ kind: "schema", breaks: "missing_id" }, 0.3, 1, LISTS),
    reason: /unexpected response body.*\bid\b/,
    expect: everywhere("either"),
  },
  {
    id: "schema: wrong type",
    injects: "30% of list pages have their first item's `id` as a boolean",
    handling: "parsed with zod at the boundary: the run fails naming the item's path and field",
    settings: scheduled({ kind: "schema", breaks: "wrong_type" }, 0.3, 1, LISTS),
    reason: /unexpected response body.*\bid\b/,
    expect: everywhere("either"),
  },
  {
    id: "schema: null list",
    injects: "30% of list pages have the list itself `null`",
    handling: "parsed with zod at the boundary: the run fails naming the list's field",
    settings: scheduled({ kind: "schema", breaks: "null_list" }, 0.3, 1, LISTS),
    reason: /unexpected response body.*(items|Resources)/,
    expect: everywhere("either"),
  },
  {
    id: "duplicates across pages",
    injects:
      "every page after the first also repeats the previous page's last item (each page one longer than asked; no item missing)",
    handling:
      "each record is written once; a page longer than asked never ends a list on its count (the repeats inflate it): the end is an empty page, a short one, or the total reached on a page no longer than asked",
    settings: () => ({ pages: "duplicates" }),
    reason: /^$/,
    expect: everywhere("exact"),
  },
  {
    id: "alternating pages",
    injects:
      "every list of more than two pages serves pages 1, 2, 1, 2, ... from its third page on",
    handling:
      "a page equal to any earlier page of the list (Brent's cycle detection in the cursor) fails the run: the list cannot be read whole",
    settings: () => ({ pages: "alternate" }),
    reason: /repeated an earlier page|go round in a cycle/,
    expect: everywhere("failed"),
  },
  {
    id: "token endpoint down for a while",
    injects: "the token request answered 503 (and 502, 504) on its first four attempts",
    handling: "the token request is retried like any idempotent request; the run goes on",
    settings: scheduled({ kind: "status5xx" }, 1, 4, TOKEN),
    reason: /(token|\/auth).*answered 50[234]/,
    expect: everywhere("exact"),
  },
  {
    id: "user added mid-sync",
    injects:
      "after the first page of users is read, a user is added at the front of the list (every later page shifts by one)",
    handling:
      "the list's total changed between pages: the run fails (the list cannot be read consistently), to be run again",
    settings: () => ({ change: "add_user" }),
    reason: /changed while it was read/,
    expect: everywhere("failed"),
  },
  {
    id: "user removed mid-sync",
    injects:
      "after the first page of users is read, one of its users is removed (every later page shifts by one: a user would be skipped)",
    handling:
      "the list's total changed between pages: the run fails (a user would otherwise be missed), to be run again",
    settings: () => ({ change: "remove_user" }),
    reason: /changed while it was read/,
    expect: everywhere("failed"),
  },
];
