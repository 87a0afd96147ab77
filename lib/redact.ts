/**
 * Secret redaction. Configuration loaders register every secret value they read, the token
 * caches register every token they receive, and whoever builds a credential in another form (an
 * HTTP Basic header) registers that form; every line the project prints, logs or stores on an
 * error passes through `redact` (text) or `redactValue` (structured log fields). The registry is
 * process-wide on purpose: a code path cannot forget to pass it along.
 */

const REDACTED = "[REDACTED]";
/** Shorter values would redact ordinary words; no real credential is this short. */
const MIN_SECRET_LENGTH = 4;
/** How deep `redactValue` walks a structure before it gives up on the rest. */
const MAX_DEPTH = 20;

const secrets = new Set<string>();
/** The same values, longest first, so that a secret containing another is replaced whole. */
let longestFirst: string[] = [];

/**
 * The value as it may appear in text: as is; as a form body or query string encodes it (and with
 * lowercase hex digits, as some servers echo it); inside a JSON string (and with non-ASCII escaped,
 * as some servers echo it).
 */
function spellings(value: string): string[] {
  const uri = encodeURIComponent(value);
  const form = new URLSearchParams({ v: value }).toString().slice(2);
  const json = JSON.stringify(value).slice(1, -1);
  const lowerHex = (text: string) => text.replace(/%[0-9A-F]{2}/g, (code) => code.toLowerCase());
  const asciiJson = json.replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return [value, uri, lowerHex(uri), form, lowerHex(form), json, asciiJson];
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

/**
 * A structure with every string in it (keys included) redacted, and errors reduced to their
 * name, message and code: for log fields. Unlike redacting the structure's JSON text, this cannot
 * produce invalid JSON when a secret happens to match across JSON syntax (a secret of digits
 * inside a number, say).
 */
export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redact(value);
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_DEPTH) return "[TOO DEEP]";
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return {
      name: value.name,
      message: redact(value.message),
      ...(typeof code === "string" ? { code } : {}),
    };
  }
  if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1));
  const json = (value as { toJSON?: () => unknown }).toJSON;
  if (typeof json === "function") return redactValue(json.call(value), depth + 1);
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [redact(key), redactValue(item, depth + 1)]),
  );
}
