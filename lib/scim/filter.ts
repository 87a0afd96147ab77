/**
 * SCIM filter building (RFC 7644 section 3.4.2.2) with correct quoting: string values are JSON
 * strings, so quotes, backslashes and control characters are escaped; attribute paths are
 * checked, so a value can never turn into filter syntax.
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
  return `${attribute} ${operator} ${JSON.stringify(value)}`;
}

export const eq = (attribute: string, value: FilterValue) => compare(attribute, "eq", value);

export function and(...filters: string[]): string {
  return filters.map((f) => `(${f})`).join(" and ");
}

export function or(...filters: string[]): string {
  return filters.map((f) => `(${f})`).join(" or ");
}

export function not(filter: string): string {
  return `not (${filter})`;
}
