/** Errors of the simulators' limiter catalogue. */

/** A `limiter` setting that does not parse: names the field and what to write instead. */
export class LimiterSettingsError extends Error {
  override name = "LimiterSettingsError";
  readonly code = "limiter_settings_invalid";
}
