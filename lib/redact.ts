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
/** The same values, longest first, so that a secret containing another is replaced whole. */
let longestFirst: string[] = [];

/** The value as it may appear in text: as is, in a form body or query string, in a JSON string. */
function spellings(value: string): string[] {
  return [
    value,
    encodeURIComponent(value),
    new URLSearchParams({ v: value }).toString().slice(2),
    JSON.stringify(value).slice(1, -1),
  ];
}

export function registerSecret(value: string | undefined): void {
  if (!value || value.length < MIN_SECRET_LENGTH) return;
  for (const spelling of spellings(value)) secrets.add(spelling);
  sortSecrets();
}

/** Forgets a value that can no longer be used (a replaced token), so the registry stays small. */
export function forgetSecret(value: string): void {
  for (const spelling of spellings(value)) secrets.delete(spelling);
  sortSecrets();
}

function sortSecrets(): void {
  longestFirst = [...secrets]
    .filter((secret) => secret.length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length);
}

export function redact(text: string): string {
  let out = text;
  for (const secret of longestFirst) {
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return out;
}
