/** The rate controller's settings and what it hands its caller. */
export interface AdaptiveRateSettings {
  /**
   * The configured `..._REQUESTS_PER_SECOND`: unset, adapt from `START_RATE` with no ceiling;
   * 0, no client-side ceiling and no pacing until the upstream answers 429; N, start at N and
   * never exceed it.
   */
  requestsPerSecond?: number | undefined;
}

/** One request as the controller saw it start. */
export interface StartTicket {
  readonly startedAt: number;
  /** The pace it started at. */
  readonly pace: number;
  /** Requests in flight when it started, itself included. */
  readonly level: number;
  /** The request sent alone to find out whether a block is over. */
  readonly probe: boolean;
  /** Started in slow start: refused, it is the overshoot that ends slow start. */
  readonly slowStart: boolean;
  /** Answered 429: no longer counted as accepted. */
  refused: boolean;
}

/** What a 429 means for the refused request: wait until `retryAt` before trying again. */
export interface RefusalVerdict {
  retryAt: number;
  /** Every start is held (a block); the refused request's retry is the probe or follows it. */
  blocked: boolean;
}
