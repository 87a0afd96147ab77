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
} from "../../json/jsonBytes";
import { upstreamId } from "../upstreamId";

/** A membership page's item ids, in order, and its `totalItems`. */
export interface IdPage {
  ids: string[];
  totalItems: number | undefined;
}

/**
 * A membership page's ids and `totalItems`, read from its bytes without decoding them into a
 * string or building its items: a team's members come as full user records (three quarters of
 * what a sync of 100,000 users receives), of which only the ids are used.
 *
 * Only a shortcut: it answers only for a page that `listResponse` and `idOnly` accept with these
 * very ids: the whole body JSON (RFC 8259, the grammar `JSON.parse` has; bytes of 0x80 and above
 * only inside strings, where decoding leaves any UTF-8 sequence, a malformed one as U+FFFD, and
 * never takes an ASCII byte in), an object whose `items` is an array of objects, each with one
 * `id` that `upstreamId` accepts, and a `totalItems`, when present, that is a non-negative
 * integer. Anything else (a body that is not JSON, an item without a usable id, a key written with
 * escapes or twice, nesting deeper than `MAX_DEPTH`) gives undefined: the caller then parses the
 * page as any other, and it fails with the same message as ever.
 */
export function readIdPage(bytes: Buffer): IdPage | undefined {
  src = bytes;
  end = bytes.length;
  at = 0;
  try {
    return topObject();
  } catch (error) {
    if (error === NO) return undefined;
    throw error;
  } finally {
    src = EMPTY;
  }
}

/** Deeper nesting than this inside an item is left to `JSON.parse`. */
const MAX_DEPTH = 64;

const EMPTY = Buffer.alloc(0);
let src: Buffer = EMPTY;
let end = 0;
let at = 0;

/** Thrown inside; `readIdPage` answers undefined for it. */
const NO = Symbol("not a plain id page");

/** The byte at `i`, or -1 past the end. */
function byte(i: number): number {
  return i < end ? (src[i] as number) : -1;
}

function topObject(): IdPage | undefined {
  space();
  if (byte(at) !== OPEN_BRACE) return undefined;
  at++;
  let ids: string[] | undefined;
  let totalItems: number | undefined;
  let sawTotal = false;
  space();
  if (byte(at) === CLOSE_BRACE) {
    at++;
  } else {
    do {
      const key = plainKey();
      if (key === KEY_ITEMS) {
        if (ids !== undefined) return undefined;
        ids = items();
      } else if (key === KEY_TOTAL) {
        if (sawTotal) return undefined;
        sawTotal = true;
        totalItems = count();
      } else {
        value(1);
      }
    } while (nextMember(CLOSE_BRACE));
  }
  space();
  if (at !== end || ids === undefined) return undefined;
  return { ids, totalItems };
}

/** `,` then whitespace (true), or the closing character (false); anything else is not JSON. */
function nextMember(close: number): boolean {
  space();
  const c = byte(at++);
  if (c === COMMA) {
    space();
    return true;
  }
  if (c === close) return false;
  throw NO;
}

const KEY_OTHER = 0;
const KEY_ITEMS = 1;
const KEY_TOTAL = 2;
const KEY_ID = 3;
const ITEMS = [...Buffer.from("items")];
const TOTAL = [...Buffer.from("totalItems")];

/** A member's key, written without escapes, then `:` and whitespace: which key it is. */
function plainKey(): number {
  const bytes = src;
  if (byte(at) !== QUOTE) throw NO;
  const start = at + 1;
  // A loop rather than `indexOf`: keys are short, and a native call a key cost more.
  let close = start;
  for (;;) {
    if (close >= end) throw NO;
    const c = bytes[close] as number;
    if (c === QUOTE) break;
    if (c === BACKSLASH || c < 0x20) throw NO;
    close++;
  }
  at = close + 1;
  space();
  if (byte(at++) !== COLON) throw NO;
  space();
  const length = close - start;
  if (length === 2) return bytes[start] === 0x69 && bytes[start + 1] === 0x64 ? KEY_ID : KEY_OTHER;
  if (length === ITEMS.length && same(start, ITEMS)) return KEY_ITEMS;
  if (length === TOTAL.length && same(start, TOTAL)) return KEY_TOTAL;
  return KEY_OTHER;
}

/** Whether the bytes from `start` are `word`'s (a `Buffer.compare` a key cost more than this). */
function same(start: number, word: readonly number[]): boolean {
  for (let i = 0; i < word.length; i++) if (src[start + i] !== word[i]) return false;
  return true;
}

const TRUE = [...Buffer.from("true")];
const FALSE = [...Buffer.from("false")];
const NULL = [...Buffer.from("null")];

function literal(word: readonly number[]): void {
  if (at + word.length > end || !same(at, word)) throw NO;
  at += word.length;
}

function items(): string[] {
  if (byte(at++) !== OPEN_BRACKET) throw NO;
  const ids: string[] = [];
  space();
  if (byte(at) === CLOSE_BRACKET) {
    at++;
    return ids;
  }
  do {
    ids.push(item());
  } while (nextMember(CLOSE_BRACKET));
  return ids;
}

/** An item: an object with exactly one `id` key; its id as `upstreamId` gives it. */
function item(): string {
  if (byte(at++) !== OPEN_BRACE) throw NO;
  let id: string | undefined;
  space();
  if (byte(at) === CLOSE_BRACE) throw NO;
  do {
    if (plainKey() === KEY_ID) {
      if (id !== undefined) throw NO;
      id = itemId();
    } else {
      value(2);
    }
  } while (nextMember(CLOSE_BRACE));
  if (id === undefined) throw NO;
  return id;
}

/** Integers of up to 15 digits, no leading zero: safe, and written as `String` writes them. */
const PLAIN_NUMBER = /^(?:0|[1-9][0-9]{0,14})$/;

/**
 * An item's id. One of letters, digits, `_` and `-` passes `upstreamId` as it is; any other
 * string (but one with escapes, left to `JSON.parse`) and any other number are asked.
 */
function itemId(): string {
  const start = at;
  const c = byte(at);
  if (c === QUOTE) {
    string();
    let plain = at - 1 > start + 1;
    for (let i = start + 1; i < at - 1; i++) {
      const b = src[i] as number;
      if (b === BACKSLASH) throw NO;
      if (!isPlain(b)) plain = false;
    }
    return plain
      ? src.toString("latin1", start + 1, at - 1)
      : checked(src.toString("utf8", start + 1, at - 1));
  }
  if (c === MINUS || isDigit(c)) {
    number();
    const text = src.toString("latin1", start, at);
    return PLAIN_NUMBER.test(text) ? text : checked(Number(text));
  }
  throw NO;
}

function checked(id: string | number): string {
  const parsed = upstreamId.safeParse(id);
  if (!parsed.success) throw NO;
  return parsed.data;
}

/** `totalItems`: a non-negative integer, as `listResponse` takes it. */
function count(): number {
  const start = at;
  const c = byte(at);
  if (c !== MINUS && !isDigit(c)) throw NO;
  number();
  const n = Number(src.toString("latin1", start, at));
  if (!Number.isSafeInteger(n) || n < 0 || Object.is(n, -0)) throw NO;
  return n;
}

/** Any JSON value, checked and skipped. */
function value(depth: number): void {
  const c = byte(at);
  if (c === QUOTE) string();
  else if (c === MINUS || isDigit(c)) number();
  else if (c === OPEN_BRACE) container(depth, CLOSE_BRACE, true);
  else if (c === OPEN_BRACKET) container(depth, CLOSE_BRACKET, false);
  else if (c === LOWER_T) literal(TRUE);
  else if (c === LOWER_F) literal(FALSE);
  else if (c === LOWER_N) literal(NULL);
  else throw NO;
}

function container(depth: number, close: number, keyed: boolean): void {
  if (depth >= MAX_DEPTH) throw NO;
  at++;
  space();
  if (byte(at) === close) {
    at++;
    return;
  }
  do {
    if (keyed) {
      string();
      space();
      if (byte(at++) !== COLON) throw NO;
      space();
    }
    value(depth + 1);
  } while (nextMember(close));
}

/** A string: no raw control characters, only JSON's escapes. */
function string(): void {
  const bytes = src;
  const last = end;
  if (byte(at) !== QUOTE) throw NO;
  let i = at + 1;
  for (;;) {
    if (i >= last) throw NO;
    const c = bytes[i++] as number;
    // Most bytes of a string: lowercase letters, and any byte of a multi-byte UTF-8 character.
    if (c > BACKSLASH) continue;
    if (c === QUOTE) break;
    if (c === BACKSLASH) {
      const e = byte(i++);
      if (e === LOWER_U) {
        for (let k = 0; k < 4; k++) if (!isHex(byte(i++))) throw NO;
      } else if (!isEscape(e)) throw NO;
    } else if (c < 0x20) throw NO;
  }
  at = i;
}

/** `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` */
function number(): void {
  if (byte(at) === MINUS) at++;
  const first = byte(at);
  if (first === DIGIT_0) at++;
  else if (first > DIGIT_0 && first <= DIGIT_9) digits();
  else throw NO;
  if (byte(at) === DOT) {
    at++;
    if (!isDigit(byte(at))) throw NO;
    digits();
  }
  const e = byte(at);
  if (e === LOWER_E || e === UPPER_E) {
    at++;
    const sign = byte(at);
    if (sign === PLUS || sign === MINUS) at++;
    if (!isDigit(byte(at))) throw NO;
    digits();
  }
}

function digits(): void {
  while (isDigit(byte(at))) at++;
}

function space(): void {
  for (;;) {
    const c = byte(at);
    if (isSpace(c)) at++;
    else return;
  }
}

const isDigit = (c: number) => c >= DIGIT_0 && c <= DIGIT_9;
const isHex = (c: number) =>
  (c >= DIGIT_0 && c <= DIGIT_9) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
/** A letter, a digit, `_` or `-`. */
const isPlain = (c: number) =>
  (c >= DIGIT_0 && c <= DIGIT_9) ||
  (c >= 0x41 && c <= 0x5a) ||
  (c >= 0x61 && c <= 0x7a) ||
  c === 0x5f ||
  c === MINUS;
/** The characters after `\` that JSON allows, but `u`: `" \ / b f n r t`. */
const isEscape = (c: number) =>
  c === QUOTE ||
  c === BACKSLASH ||
  c === 0x2f ||
  c === 0x62 ||
  c === 0x66 ||
  c === 0x6e ||
  c === 0x72 ||
  c === 0x74;

const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const LOWER_U = 0x75;
const LOWER_T = 0x74;
const LOWER_F = 0x66;
const LOWER_N = 0x6e;
