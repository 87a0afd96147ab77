import { jsonLine } from "./jsonLines";
import type { GrantRecord } from "./records";

/**
 * The JSON Lines of grants as UTF-8 bytes after `reserve` bytes left for the caller: exactly the
 * bytes of `jsonLine` for each. A grant as `grant()` builds it (a plain object with these four
 * keys in this order, a plain principal with `type` and `id`, every value a string of ASCII from
 * space to DEL without `"` or `\`) is written from a template, which JSON.stringify would write
 * byte for byte: twice as fast as JSON.stringify of the page, which was the writer's largest cost
 * (413,000 grants at 100,000 users). Any other grant is serialised by JSON.stringify.
 */
export function grantLinesBytes(grants: readonly GrantRecord[], reserve = 0): Buffer {
  const lines: string[] = new Array(grants.length);
  let ascii = true;
  for (let i = 0; i < grants.length; i++) {
    const grant = grants[i] as GrantRecord;
    if (isPlainGrant(grant)) {
      const { principal } = grant;
      lines[i] =
        `{"kind":"grant","id":"${grant.id}","entitlement":"${grant.entitlement}","principal":{"type":"${principal.type}","id":"${principal.id}"}}\n`;
    } else {
      lines[i] = jsonLine(grant);
      ascii = false;
    }
  }
  const text = lines.join("");
  const encoding = ascii ? "latin1" : "utf8";
  const bytes = Buffer.allocUnsafe(reserve + Buffer.byteLength(text, encoding));
  bytes.write(text, reserve, encoding);
  return bytes;
}

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
