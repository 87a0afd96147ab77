/**
 * SCIM filter building (RFC 7644 section 3.4.2.2) with correct quoting: string values are JSON
 * strings, so quotes, backslashes and control characters are escaped; attribute paths are
 * checked, so a value can never turn into filter syntax. Combinations carry only the parentheses
 * precedence needs (`not` binds tighter than `and`, `and` tighter than `or`), because strict
 * parsers refuse redundant ones such as `((a eq 1))`.
 */

export type FilterValue = string | number | boolean | null;
export type ComparisonOperator = "eq" | "ne" | "co" | "sw" | "ew" | "gt" | "lt" | "ge" | "le";

/** An attribute path: an optional schema URN, then `attr` or `attr.subAttr` (RFC 7644 ABNF). */
const ATTRIBUTE_PATH =
  /^(?:urn:[A-Za-z0-9.:_-]+:)?[A-Za-z][A-Za-z0-9_-]*(?:\.[A-Za-z][A-Za-z0-9_-]*)?$/;

export function compare(
  attribute: string,
  operator: ComparisonOperator,
  value: FilterValue,
): string {
  if (!ATTRIBUTE_PATH.test(attribute))
    throw new RangeError(`not a SCIM attribute path: ${attribute}`);
  // JSON.stringify would write NaN and Infinity as null, a different filter altogether.
  if (typeof value === "number" && !Number.isFinite(value)) {
    throw new RangeError(
      `${attribute} ${operator} ${value}: a SCIM filter value must be a finite number (JSON has no ${value})`,
    );
  }
  return `${attribute} ${operator} ${JSON.stringify(value)}`;
}

export const eq = (attribute: string, value: FilterValue) => compare(attribute, "eq", value);
export const ne = (attribute: string, value: FilterValue) => compare(attribute, "ne", value);

/** All of `filters`; an operand that is an `or` at its top level is parenthesised. */
export function and(...filters: string[]): string {
  return combine("and", filters)
    .map((f) => (topLevelOperators(f).has("or") ? `(${f})` : f))
    .join(" and ");
}

/** Any of `filters`; `or` binds loosest, so no operand needs parentheses. */
export function or(...filters: string[]): string {
  return combine("or", filters).join(" or ");
}

export function not(filter: string): string {
  return `not (${filter})`;
}

function combine(operator: "and" | "or", filters: string[]): string[] {
  if (filters.length === 0) throw new RangeError(`${operator}() needs at least one filter`);
  return filters;
}

/**
 * The logical operators of `filter` outside any parentheses and quoted strings: what decides
 * whether it needs parentheses as an operand.
 */
function topLevelOperators(filter: string): Set<"and" | "or"> {
  const found = new Set<"and" | "or">();
  let depth = 0;
  let inString = false;
  for (let i = 0; i < filter.length; i++) {
    const char = filter[i];
    if (inString) {
      if (char === "\\") i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "(") depth++;
    else if (char === ")") depth--;
    else if (depth === 0 && char === " ") {
      const word = /^ (and|or) /i.exec(filter.slice(i))?.[1]?.toLowerCase();
      if (word === "and" || word === "or") found.add(word);
    }
  }
  return found;
}
