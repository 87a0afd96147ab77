/**
 * Secret redaction. Configuration loaders register every secret value they read and the token
 * caches register every token they receive; every line the project prints, logs or stores on an
 * error passes through `redact`. The registry is process-wide on purpose: a code path cannot
 * forget to pass it along.
 */

const REDACTED = "[REDACTED]";
/** Shorter values would redact ordinary words; no real credential is this short. */
const MIN_SECRET_LENGTH = 4;

const secrets = new Set<string>();

export function registerSecret(value: string | undefined): void {
  if (!value || value.length < MIN_SECRET_LENGTH) return;
  secrets.add(value);
  // The same value as it appears in a form body, a query string or a JSON string.
  secrets.add(encodeURIComponent(value));
  secrets.add(new URLSearchParams({ v: value }).toString().slice(2));
  secrets.add(JSON.stringify(value).slice(1, -1));
}

export function redact(text: string): string {
  let out = text;
  // Longest first, so that a secret containing another is replaced whole.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret.length >= MIN_SECRET_LENGTH && out.includes(secret)) {
      out = out.split(secret).join(REDACTED);
    }
  }
  return out;
}
