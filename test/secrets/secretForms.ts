/**
 * Distinctive secret values and every form in which one is sent or may come back: characters
 * that change under form encoding (space, `+`, `&`, `=`), URL encoding (`/`, `?`, `#`, `%`),
 * JSON (`"`, `\`) and base64, plus non-ASCII.
 */
export const SECRETS = {
  blacklineClientSecret: 'bl-Secret+/=&%41 "q\\z~é-1',
  blacklineApiKey: "bl-ApiKey 42/=?#&é+Ω-2",
  valimailClientId: 'vm-Client+Id/=&é "x-3',
  valimailAppId: "vm-App+Id 9/=%é-4",
  platformSecret: 'pf-Secret+/= &é"-5',
} as const;

/** The client id sent alongside the BlackLine client secret (not a secret, but part of Basic). */
export const BLACKLINE_CLIENT_ID = "bl-client+id/1";

function lowerHex(text: string): string {
  return text.replace(/%[0-9A-F]{2}/g, (code) => code.toLowerCase());
}

/** RFC 6749 section 2.3.1: each half form-encoded, joined by a colon, base64. */
export function basicToken(user: string, password: string): string {
  const form = (v: string) => new URLSearchParams({ v }).toString().slice(2);
  return Buffer.from(`${form(user)}:${form(password)}`, "utf8").toString("base64");
}

/** Every spelling of `value` that would betray it: raw, trimmed, URL, form, JSON, base64. */
export function formsOf(value: string): string[] {
  const forms = new Set<string>();
  for (const v of [value, value.trim()]) {
    const uri = encodeURIComponent(v);
    const form = new URLSearchParams({ v }).toString().slice(2);
    forms.add(v);
    forms.add(uri);
    forms.add(lowerHex(uri));
    forms.add(form);
    forms.add(JSON.stringify(v).slice(1, -1));
    forms.add(Buffer.from(v, "utf8").toString("base64"));
  }
  return [...forms];
}

/** Every form of every secret given, plus extra literal values (tokens, Basic headers). */
export function leakChecker(values: readonly string[], literals: readonly string[] = []) {
  const forms = [...new Set([...values.flatMap(formsOf), ...literals])].filter(
    (f) => f.length >= 4,
  );
  /** The forms found in `text` (a long enough piece of a secret counts too). */
  return (text: string): string[] => {
    const found = forms.filter((form) => text.includes(form));
    for (const value of values) {
      // A secret cut short (a message shortened after the secret was put in) leaks its start.
      for (let i = 0; i + 10 <= value.length; i++) {
        const piece = value.slice(i, i + 10);
        if (text.includes(piece)) found.push(`piece of a secret: ${piece}`);
      }
    }
    return [...new Set(found)];
  };
}
