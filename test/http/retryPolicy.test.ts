import { describe, expect, it } from "vitest";
import {
  backoffDelayMs,
  DEFAULT_RETRY,
  isRetryableStatus,
  parseRetryAfter,
} from "../../lib/http/retryPolicy";

describe("retry policy", () => {
  it("retries 429 always, 502/503/504 only when idempotent, and nothing else", () => {
    expect(isRetryableStatus(429, false)).toBe(true);
    for (const status of [502, 503, 504]) {
      expect(isRetryableStatus(status, true)).toBe(true);
      expect(isRetryableStatus(status, false)).toBe(false);
    }
    for (const status of [400, 401, 403, 404, 409, 500])
      expect(isRetryableStatus(status, true)).toBe(false);
  });

  it("reads Retry-After as seconds or as an HTTP date, and ignores what it cannot read", () => {
    const now = Date.parse("2026-11-22T10:00:00Z");
    expect(parseRetryAfter("3", now)).toBe(3000);
    expect(parseRetryAfter(" 0 ", now)).toBe(0);
    expect(parseRetryAfter("Sun, 22 Nov 2026 10:00:05 GMT", now)).toBe(5000);
    expect(parseRetryAfter("Sun, 22 Nov 2026 09:59:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it("backs off exponentially with full jitter, capped", () => {
    const settings = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 1000 };
    expect(backoffDelayMs(1, settings, () => 0.999)).toBe(100);
    expect(backoffDelayMs(3, settings, () => 0.999)).toBe(400);
    expect(backoffDelayMs(10, settings, () => 0.999)).toBe(999);
    expect(backoffDelayMs(10, settings, () => 0)).toBe(0);
  });
});
