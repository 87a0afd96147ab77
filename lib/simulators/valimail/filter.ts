/**
 * The simulator's SCIM filter evaluator (RFC 7644 section 3.4.2.2): comparisons with eq, ne, co,
 * sw, ew, gt, lt, ge, le, `pr`, joined by and, or, not and parentheses. String comparisons are
 * case-insensitive, as for `userName` (caseExact false in RFC 7643).
 */

type Value = string | number | boolean | null;
export type Filter = (resolve: (path: string) => Value | undefined) => boolean;

export class FilterSyntaxError extends Error {}

const TOKEN = /\s*(\(|\)|"(?:[^"\\]|\\.)*"|[^\s()]+)/y;

export function parseFilter(text: string): Filter {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  let match: RegExpExecArray | null = TOKEN.exec(text);
  while (match) {
    tokens.push(match[1] as string);
    match = TOKEN.exec(text);
  }
  if (tokens.length === 0) throw new FilterSyntaxError("empty filter");
  let position = 0;
  const peek = () => tokens[position]?.toLowerCase();
  const take = () => {
    const token = tokens[position++];
    if (token === undefined) throw new FilterSyntaxError("unexpected end of filter");
    return token;
  };

  const parseOr = (): Filter => {
    let left = parseAnd();
    while (peek() === "or") {
      position++;
      const l = left;
      const r = parseAnd();
      left = (resolve) => l(resolve) || r(resolve);
    }
    return left;
  };
  const parseAnd = (): Filter => {
    let left = parseUnary();
    while (peek() === "and") {
      position++;
      const l = left;
      const r = parseUnary();
      left = (resolve) => l(resolve) && r(resolve);
    }
    return left;
  };
  const parseUnary = (): Filter => {
    if (peek() === "not") {
      position++;
      const inner = parseUnary();
      return (resolve) => !inner(resolve);
    }
    if (peek() === "(") {
      position++;
      const inner = parseOr();
      if (take() !== ")") throw new FilterSyntaxError("missing )");
      return inner;
    }
    return parseComparison();
  };
  const parseComparison = (): Filter => {
    const path = take();
    const op = take().toLowerCase();
    if (op === "pr") return (resolve) => resolve(path) !== undefined && resolve(path) !== null;
    if (!["eq", "ne", "co", "sw", "ew", "gt", "lt", "ge", "le"].includes(op)) {
      throw new FilterSyntaxError(`unknown operator ${op}`);
    }
    const expected = parseValue(take());
    return (resolve) => compareValues(resolve(path), op, expected);
  };

  const filter = parseOr();
  if (position !== tokens.length) throw new FilterSyntaxError(`unexpected ${tokens[position]}`);
  return filter;
}

function parseValue(token: string): Value {
  if (token.startsWith('"')) {
    try {
      return JSON.parse(token) as string;
    } catch {
      throw new FilterSyntaxError(`bad string ${token}`);
    }
  }
  if (token === "true" || token === "false") return token === "true";
  if (token === "null") return null;
  if (/^-?\d+(\.\d+)?$/.test(token)) return Number(token);
  throw new FilterSyntaxError(`bad value ${token}`);
}

function compareValues(actual: Value | undefined, op: string, expected: Value): boolean {
  const a = typeof actual === "string" ? actual.toLowerCase() : actual;
  const e = typeof expected === "string" ? expected.toLowerCase() : expected;
  switch (op) {
    case "eq":
      return a === e;
    case "ne":
      return a !== e;
    case "co":
      return typeof a === "string" && typeof e === "string" && a.includes(e);
    case "sw":
      return typeof a === "string" && typeof e === "string" && a.startsWith(e);
    case "ew":
      return typeof a === "string" && typeof e === "string" && a.endsWith(e);
    default: {
      if (a === undefined || a === null || e === null) return false;
      if (op === "gt") return a > e;
      if (op === "lt") return a < e;
      if (op === "ge") return a >= e;
      return a <= e;
    }
  }
}
