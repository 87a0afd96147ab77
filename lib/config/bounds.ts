import { durationSetting, integerSetting } from "./fields";

/**
 * The bounds every connector puts on its upstream and its runs (issue 9: nothing from outside may
 * exhaust the machine or run without end). Each is a tuning variable `CONNECTOR_<APP>_...`
 * (docs/configuration.md), and each failure it causes names the variable that raises it.
 */

/** A bound and the variable that sets it, so that the failure it causes can say how to raise it. */
export interface Bound<Value = number> {
  readonly value: Value;
  readonly variable: string;
}

export interface UpstreamBounds {
  /** The largest answer read, counted after decompression, in bytes. */
  maxResponseBytes: Bound;
  /** One request, headers and body; unset: the runtime's own (30 s, 20 s in the cloud runtime). */
  requestTimeoutMs: Bound<number | undefined>;
  /** The most pages one list may have. */
  maxPagesPerList: Bound;
  /** The most a whole sync may take, from its start. */
  syncDeadlineMs: Bound;
  /** The page size's variable: a smaller page is the usual answer to an answer over the cap. */
  pageSizeVariable: string;
}

const MIB = 2 ** 20;

export const BOUND_DEFAULTS = {
  maxResponseMiB: 64,
  maxPagesPerList: 100_000,
  syncDeadlineMs: 6 * 3_600_000,
} as const;

/** The schema of each bound's variable, with its range and default. */
export const boundSettings = {
  maxResponseMiB: () => integerSetting(1, 1024).default(BOUND_DEFAULTS.maxResponseMiB),
  requestTimeout: () => durationSetting(1_000, 600_000).optional(),
  maxPagesPerList: () => integerSetting(1, 10_000_000).default(BOUND_DEFAULTS.maxPagesPerList),
  syncDeadline: () =>
    durationSetting(1_000, 168 * 3_600_000).default(BOUND_DEFAULTS.syncDeadlineMs),
};

/**
 * The bounds of a connector whose variables start with `prefix` (`CONNECTOR_ACCOUNTING`), from
 * the values its schema parsed.
 */
export function upstreamBounds(
  prefix: string,
  values: {
    maxResponseMiB: number;
    requestTimeoutMs: number | undefined;
    maxPagesPerList: number;
    syncDeadlineMs: number;
  },
): UpstreamBounds {
  return {
    maxResponseBytes: {
      value: values.maxResponseMiB * MIB,
      variable: `${prefix}_MAX_RESPONSE_MIB`,
    },
    requestTimeoutMs: { value: values.requestTimeoutMs, variable: `${prefix}_REQUEST_TIMEOUT` },
    maxPagesPerList: { value: values.maxPagesPerList, variable: `${prefix}_MAX_PAGES_PER_LIST` },
    syncDeadlineMs: { value: values.syncDeadlineMs, variable: `${prefix}_SYNC_DEADLINE` },
    pageSizeVariable: `${prefix}_PAGE_SIZE`,
  };
}
