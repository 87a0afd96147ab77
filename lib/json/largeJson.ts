import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  isSpace,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from "./jsonBytes";

/**
 * A large JSON answer parsed without decoding it into one string: a list page of 1,000 users
 * (250 KB) decoded at once is a string of V8's large object space, mapped afresh for each page,
 * so each page's text cost its page faults. Here the top-level object's members are decoded and
 * parsed one by one, and an array member in runs of elements of about `RUN_BYTES` (`[` + run +
 * `]`), each a string of the young generation: about half the time of decoding and parsing the
 * page whole (microbenchmark of one such page: 1.4 against 2.9 ms).
 *
 * The value is the one `JSON.parse` gives for the whole text (decoded as `toString("utf8")`
 * decodes it): every piece is parsed by `JSON.parse`, and the pieces are cut only at bytes that
 * stand outside strings (`{ } [ ] , :` and the quotes of keys), where decoding starts and ends a
 * character (no byte of a multi-byte UTF-8 sequence, and no malformed one, takes an ASCII byte
 * in). JSON's values delimit themselves, so runs that each parse, joined by `,` into an array,
 * are that array; a cut placed wrongly (by a malformed text) leaves a run that does not parse.
 * Anything else than an object at the top, or any text that is not JSON, gives undefined: the
 * caller then parses the whole text as ever, and it fails as it always did.
 */
export function parseLargeJson(bytes: Buffer): unknown {
  return bytes.length < LARGE_BYTES ? undefined : readJsonObject(bytes);
}

/** The elements of one array member of a JSON object, handed over one by one as they are parsed. */
export interface ElementVisitor {
  /** The member whose array is visited: its value is then an empty array. */
  readonly key: string;
  visit(element: unknown, index: number): void;
}

/**
 * A JSON object read in pieces as `parseLargeJson` reads it, whatever its size; with `each`, the
 * elements of the array member `each.key` are handed to `each.visit` as their runs are parsed
 * (each element is then garbage as soon as the visitor is done with it) and the member is left an
 * empty array. A first pass checks the object's members, so `each.visit` is handed nothing from an
 * object in which `each.key` appears twice (`JSON.parse` keeps only the last), nor from one whose
 * members cannot be told apart. Undefined for anything `parseLargeJson` would not read: `each.visit`
 * may then have been handed the elements before a run that does not parse.
 */
export function readJsonObject(
  bytes: Buffer,
  each?: ElementVisitor,
): Record<string, unknown> | undefined {
  src = bytes;
  end = bytes.length;
  at = 0;
  visitor = each;
  try {
    if (each) checkMembers(each.key);
    at = 0;
    return topObject();
  } catch (error) {
    if (error === NO || error instanceof SyntaxError) return undefined;
    throw error;
  } finally {
    src = EMPTY;
    visitor = undefined;
  }
}

/**
 * Texts from this size are read in pieces: above 64 KB, a text of characters beyond Latin-1
 * (two bytes each in V8) is a large object.
 */
export const LARGE_BYTES = 64 * 1024;
/** An array's elements are parsed in runs of at least this many bytes (or the rest). */
const RUN_BYTES = 32 * 1024;

const EMPTY = Buffer.alloc(0);
let src: Buffer = EMPTY;
let end = 0;
let at = 0;
let visitor: ElementVisitor | undefined;

/** Thrown inside; `parseLargeJson` answers undefined for it. */
const NO = Symbol("not read in pieces");

function topObject(): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  space();
  expect(OPEN_BRACE);
  space();
  if (src[at] === CLOSE_BRACE) {
    at++;
  } else {
    for (;;) {
      if (src[at] !== QUOTE) throw NO;
      const keyEnd = stringEnd(at + 1);
      const key = parse(at, keyEnd) as string;
      at = keyEnd;
      space();
      expect(COLON);
      space();
      // As `JSON.parse` defines a member: an own data property, also for `__proto__`; a key
      // written twice keeps its first place and takes its last value.
      const each = key === visitor?.key ? visitor : undefined;
      const value = src[at] === OPEN_BRACKET ? arrayInRuns(each) : scalarOrObject();
      Object.defineProperty(object, key, {
        value,
        writable: true,
        enumerable: true,
        configurable: true,
      });
      space();
      if (src[at] === CLOSE_BRACE) break;
      expect(COMMA);
      space();
    }
    at++;
  }
  space();
  if (at !== end) throw NO;
  return object;
}

/**
 * A first pass over the members, each value skipped: the visited key must stand once, so that no
 * element is handed over from an array that `JSON.parse` would drop for a later one.
 */
function checkMembers(key: string): void {
  let seen = false;
  space();
  expect(OPEN_BRACE);
  space();
  if (src[at] === CLOSE_BRACE) return;
  for (;;) {
    if (src[at] !== QUOTE) throw NO;
    const keyEnd = stringEnd(at + 1);
    if (parse(at, keyEnd) === key) {
      if (seen) throw NO;
      seen = true;
    }
    at = keyEnd;
    space();
    expect(COLON);
    space();
    at = skipValue(at);
    space();
    if (src[at] === CLOSE_BRACE) return;
    expect(COMMA);
    space();
  }
}

/** Any value but an array, parsed whole. */
function scalarOrObject(): unknown {
  const valueEnd = skipValue(at);
  const value = parse(at, valueEnd);
  at = valueEnd;
  return value;
}

/** The array at `at`, its elements parsed in runs; with `visitor`, handed to it instead of kept. */
function arrayInRuns(visitor?: ElementVisitor): unknown[] {
  const elements: unknown[] = [];
  let index = 0;
  at++;
  space();
  if (src[at] === CLOSE_BRACKET) {
    at++;
    return elements;
  }
  let runStart = at;
  for (;;) {
    const elementEnd = skipValue(at);
    at = elementEnd;
    space();
    const next = src[at];
    if (next !== COMMA && next !== CLOSE_BRACKET) throw NO;
    if (next === CLOSE_BRACKET || elementEnd - runStart >= RUN_BYTES) {
      const run = parse(runStart, elementEnd, true) as unknown[];
      for (let i = 0; i < run.length; i++) {
        if (visitor) visitor.visit(run[i], index++);
        else elements.push(run[i]);
      }
      runStart = at + 1;
    }
    at++;
    if (next === CLOSE_BRACKET) return elements;
    space();
  }
}

/** `JSON.parse` of the text of bytes `from` to `to`, as an array's elements when `elements`. */
function parse(from: number, to: number, elements = false): unknown {
  const text = src.toString("utf8", from, to);
  return JSON.parse(elements ? `[${text}]` : text);
}

/**
 * Where the value at `i` ends: after the closing byte of a string, object or array (found by
 * counting brackets outside strings), or at the byte that ends a number or literal. Only where:
 * `JSON.parse` checks the value.
 */
function skipValue(i: number): number {
  let depth = 0;
  let j = i;
  for (;;) {
    if (j >= end) throw NO;
    const c = src[j] as number;
    if (c === QUOTE) {
      j = stringEnd(j + 1);
      if (depth === 0) return j;
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (depth === 0) return j;
      depth--;
      if (depth === 0) return j + 1;
    } else if (depth === 0 && (c === COMMA || isSpace(c))) {
      return j;
    }
    j++;
  }
}

/** The byte after the closing quote of the string whose first character is at `i`. */
function stringEnd(i: number): number {
  const bytes = src;
  const last = end;
  let j = i;
  for (;;) {
    if (j >= last) throw NO;
    const c = bytes[j++] as number;
    if (c === QUOTE) return j;
    if (c === BACKSLASH) j++;
  }
}

function expect(c: number): void {
  if (src[at] !== c) throw NO;
  at++;
}

function space(): void {
  while (at < end && isSpace(src[at] as number)) at++;
}
