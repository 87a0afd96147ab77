/** What the HTTP layer did, for the sync summary and metrics. */
export interface HttpCounters {
  /** Requests sent, every attempt counted, token calls included. */
  requests: number;
  /** Attempts that repeated an earlier one. */
  retries: number;
  /** Times a 429 made the client wait, and the milliseconds spent waiting. */
  rateLimitWaits: number;
  rateLimitWaitMs: number;
  /** Tokens fetched (the first one and every refresh). */
  tokenRequests: number;
}

export function newCounters(): HttpCounters {
  return { requests: 0, retries: 0, rateLimitWaits: 0, rateLimitWaitMs: 0, tokenRequests: 0 };
}
