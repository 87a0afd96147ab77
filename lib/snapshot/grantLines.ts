import { jsonLine } from "./jsonLines";
import type { GrantRecord } from "./records";

/**
 * The JSON Lines of grants as UTF-8 bytes after `reserve` bytes left for the caller: exactly the
 * bytes of `jsonLine` for each. A grant as `grant()` builds it (a plain object with these four
 * keys in this order, a plain principal with `type` and `id`, every value a string of ASCII from
 * space to DEL without `"` or `\`) is written from a template, which JSON.stringify would write
 * byte for byte: twice as fast as JSON.stringify of the page, which was the writer's largest cost
 * (413,000 grants at 100,000 users). Any other grant is serialised by JSON.stringify. Lines are
 * joined in runs of `LINE_RUN`: a page's text at once is a large object of V8's heap, mapped afresh
 * for each page (a seventh of a 100,000-user sync's page faults). `texts[i]`, when there, is grant
 * `i`'s line without its `\n`, known to be exactly `jsonLine`'s (`grantLine` took it), copied as is.
 */
export function grantLinesBytes(
  grants: readonly GrantRecord[],
  reserve = 0,
  texts?: readonly (string | undefined)[],
): Buffer {
  const runs: string[] = [];
  const plain: boolean[] = [];
  let size = reserve;
  const lines: string[] = [];
  for (let from = 0; from < grants.length; from += LINE_RUN) {
    const to = Math.min(from + LINE_RUN, grants.length);
    lines.length = to - from;
    let ascii = true;
    for (let i = from; i < to; i++) {
      const grant = grants[i] as GrantRecord;
      const known = texts?.[i];
      if (known !== undefined) {
        lines[i - from] = `${known}\n`;
        ascii = false;
      } else if (isPlainGrant(grant)) {
        const { principal } = grant;
        lines[i - from] =
          `{"kind":"grant","id":"${grant.id}","entitlement":"${grant.entitlement}","principal":{"type":"${principal.type}","id":"${principal.id}"}}\n`;
      } else {
        lines[i - from] = jsonLine(grant);
        ascii = false;
      }
    }
    const text = lines.join("");
    runs.push(text);
    plain.push(ascii);
    size += ascii ? text.length : Buffer.byteLength(text);
  }
  const bytes = Buffer.allocUnsafe(size);
  let at = reserve;
  for (let run = 0; run < runs.length; run++) {
    at += bytes.write(runs[run] as string, at, plain[run] ? "latin1" : "utf8");
  }
  return bytes;
}

/** Lines joined at once: about 30 KB of text, well within V8's young generation. */
const LINE_RUN = 256;

/**
 * ASCII from space to DEL (0x7f) without `"` and `\`: JSON.stringify writes such a string as is, in
 * quotes (it escapes only `"`, `\`, the controls below space and lone surrogates).
 */
const VERBATIM = /^[\x20\x21\x23-\x5b\x5d-\x7f]*$/;

const GRANT_KEYS = ["kind", "id", "entitlement", "principal"];
const REF_KEYS = ["type", "id"];

function isPlainGrant(grant: GrantRecord): boolean {
  const { principal } = grant;
  return (
    hasExactly(grant, GRANT_KEYS) &&
    grant.kind === "grant" &&
    verbatim(grant.id) &&
    verbatim(grant.entitlement) &&
    typeof principal === "object" &&
    principal !== null &&
    hasExactly(principal, REF_KEYS) &&
    verbatim(principal.type) &&
    verbatim(principal.id)
  );
}

function verbatim(value: unknown): boolean {
  return typeof value === "string" && VERBATIM.test(value);
}

/**
 * A plain object whose keys are `keys`, in that order: JSON.stringify would write those and no
 * other (an object of another prototype might carry `toJSON`).
 */
function hasExactly(value: object, keys: readonly string[]): boolean {
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  let at = 0;
  for (const key in value) {
    if (key !== keys[at++]) return false;
  }
  return at === keys.length;
}
