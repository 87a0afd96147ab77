import type * as z from "zod";
import {
  boundSettings,
  integerSetting,
  type SettingMeta,
  type UpstreamBounds,
  upstreamBounds,
} from "../config";
import { DEFAULT_RATE_LIMIT_WAIT_SECONDS } from "../http";

/**
 * The tuning every connector reads the same way, each under its own prefix
 * (`CONNECTOR_ACCOUNTING_MAX_CONCURRENCY`, `CONNECTOR_EMAILAUTH_MAX_CONCURRENCY`): how many
 * requests at once and per second, how long a 429 keeps waiting, the page size, and the bounds on
 * answers, requests, lists and the whole sync. All optional, with the connector's own defaults.
 */
export interface UpstreamTuning {
  maxConcurrency: number;
  /** Unset: learned from the upstream's answers; 0: no client-side ceiling; N: at most N. */
  requestsPerSecond: number | undefined;
  /** How long a request answered 429 keeps waiting, in seconds. */
  rateLimitWaitSeconds: number;
  pageSize: number;
  /** Response size, request timeout, pages per list, sync deadline, and their variables. */
  bounds: UpstreamBounds;
}

/** What differs between connectors: the defaults and the largest page the upstream serves. */
export interface TuningDefaults {
  maxConcurrency: number;
  pageSize: number;
  maxPageSize: number;
}

function tuningShape(defaults: TuningDefaults) {
  return {
    MAX_CONCURRENCY: integerSetting(1, 64)
      .default(defaults.maxConcurrency)
      .describe("Requests in flight at once."),
    REQUESTS_PER_SECOND: integerSetting(0, 1000)
      .optional()
      .meta({
        description:
          "Unset: the rate is learned from the upstream's answers (docs/rate-control.md). N: start at N and never exceed N requests in any second. 0: no client-side ceiling.",
        defaultText: "unset (learned)",
      } satisfies SettingMeta),
    RATE_LIMIT_WAIT_SECONDS: integerSetting(1, 86_400)
      .default(DEFAULT_RATE_LIMIT_WAIT_SECONDS)
      .describe(
        "How long one request answered 429 keeps waiting and trying, from its first 429, before the sync fails (an action answers `rate_limited`).",
      ),
    PAGE_SIZE: integerSetting(1, defaults.maxPageSize)
      .default(defaults.pageSize)
      .describe("Items asked for per list page."),
    MAX_RESPONSE_MIB: boundSettings
      .maxResponseMiB()
      .describe("The largest answer read, in MiB after decompression; a larger one is not read."),
    REQUEST_TIMEOUT: boundSettings.requestTimeout().meta({
      description:
        "One request, headers and body; a request without a whole answer in time is tried again, 6 attempts in all.",
      defaultText: "`30s` (`20s` in the cloud runtime)",
    } satisfies SettingMeta),
    MAX_PAGES_PER_LIST: boundSettings
      .maxPagesPerList()
      .describe("The most pages one list may have; a longer list fails the sync."),
    SYNC_DEADLINE: boundSettings
      .syncDeadline()
      .describe(
        "The most a whole sync (in the cloud runtime, a run) may take; one still running then is stopped and publishes nothing.",
      ),
  };
}

type Shape = ReturnType<typeof tuningShape>;
type Prefixed<P extends string, T> = { [K in keyof T & string as `${P}_${K}`]: T[K] };

/**
 * The tuning variables under `prefix`: their schema fields (spread into the connector's schema,
 * after its own), their hints (all optional), and `read`, which turns the parsed values into
 * `UpstreamTuning`.
 */
export function upstreamTuning<P extends string>(prefix: P, defaults: TuningDefaults) {
  const shape = tuningShape(defaults);
  const names = Object.keys(shape) as (keyof Shape & string)[];
  const fields = Object.fromEntries(
    names.map((name) => [`${prefix}_${name}`, shape[name]]),
  ) as Prefixed<P, Shape>;
  const hints = Object.fromEntries(names.map((name) => [`${prefix}_${name}`, "optional"])) as {
    [K in keyof Shape & string as `${P}_${K}`]: "optional";
  };
  const read = (parsed: z.output<z.ZodObject<Prefixed<P, Shape>>>) => {
    const value = <K extends keyof Shape & string>(name: K) =>
      (parsed as Record<string, unknown>)[`${prefix}_${name}`] as z.output<Shape[K]>;
    return {
      maxConcurrency: value("MAX_CONCURRENCY"),
      requestsPerSecond: value("REQUESTS_PER_SECOND"),
      rateLimitWaitSeconds: value("RATE_LIMIT_WAIT_SECONDS"),
      pageSize: value("PAGE_SIZE"),
      bounds: upstreamBounds(prefix, {
        maxResponseMiB: value("MAX_RESPONSE_MIB"),
        requestTimeoutMs: value("REQUEST_TIMEOUT"),
        maxPagesPerList: value("MAX_PAGES_PER_LIST"),
        syncDeadlineMs: value("SYNC_DEADLINE"),
      }),
    } satisfies UpstreamTuning;
  };
  return { fields, hints, read };
}
