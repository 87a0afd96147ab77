import { NetworkError } from "../http";
import {
  isRetryablePlatformStatus,
  PlatformCredentialsError,
  PlatformResponseError,
  PlatformStatusError,
} from "../platform";

/** The platform did not answer, or answered that it cannot serve now: worth trying again. */
export function isPlatformUnavailable(error: unknown): boolean {
  if (NetworkError.is(error)) return true;
  return PlatformStatusError.is(error) && isRetryablePlatformStatus(error.status);
}

/** A failure of the platform itself (as opposed to this host's, such as a full disk). */
export function isPlatformError(error: unknown): boolean {
  return (
    isPlatformUnavailable(error) ||
    PlatformCredentialsError.is(error) ||
    PlatformStatusError.is(error) ||
    PlatformResponseError.is(error)
  );
}

/** The platform answered and refused for good (a 4xx other than 401, 403 and 429, a bad body). */
export function isRefusal(error: unknown): boolean {
  if (PlatformResponseError.is(error)) return true;
  return PlatformStatusError.is(error) && !isRetryablePlatformStatus(error.status);
}
