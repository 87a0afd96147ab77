import { describe, expect, it } from "vitest";
import { and, compare, eq, not, or } from "../../lib/scim";
import { parseFilter } from "../../lib/simulators/valimail/filter";

describe("SCIM filter building", () => {
  it("quotes string values as JSON strings, escaping quotes, backslashes and control characters", () => {
    expect(eq("userName", "ada@example.com")).toBe('userName eq "ada@example.com"');
    expect(eq("userName", 'a"b\\c\n')).toBe('userName eq "a\\"b\\\\c\\n"');
    expect(eq("active", true)).toBe("active eq true");
    expect(compare("meta.lastModified", "gt", "2026-01-01T00:00:00Z")).toBe(
      'meta.lastModified gt "2026-01-01T00:00:00Z"',
    );
  });

  it("accepts URN-qualified attribute paths, in dot and colon form", () => {
    const urn = "urn:ietf:params:scim:schemas:extension:valimailuserextension:2.0:User";
    expect(eq(`${urn}.memberType`, "owner")).toBe(`${urn}.memberType eq "owner"`);
    expect(eq(`${urn}:memberType`, "owner")).toBe(`${urn}:memberType eq "owner"`);
  });

  it("refuses an attribute path that would smuggle in filter syntax", () => {
    expect(() => eq('userName eq "x" or userName', "y")).toThrow(/not a SCIM attribute path/);
    expect(() => eq("", "y")).toThrow(RangeError);
  });

  it("combines with and, or and not, with only the parentheses precedence needs", () => {
    expect(and(eq("active", true), or(eq("userName", "a"), not(eq("userName", "b"))))).toBe(
      'active eq true and (userName eq "a" or not (userName eq "b"))',
    );
    expect(or(and(eq("a", 1), eq("b", 2)), and(eq("c", 3), eq("d", 4)))).toBe(
      "a eq 1 and b eq 2 or c eq 3 and d eq 4",
    );
    expect(and(or(eq("a", 1), eq("b", 2)), or(eq("c", 3), eq("d", 4)))).toBe(
      "(a eq 1 or b eq 2) and (c eq 3 or d eq 4)",
    );
    expect(not(or(eq("a", 1), eq("b", 2)))).toBe("not (a eq 1 or b eq 2)");
    expect(and(eq("a", 1))).toBe("a eq 1");
    expect(() => and()).toThrow(/needs at least one filter/);
  });

  it("looks for or only outside quoted values when deciding on parentheses", () => {
    const tricky = 'x" or (y) and "z';
    expect(and(eq("userName", tricky), eq("active", true))).toBe(
      `userName eq ${JSON.stringify(tricky)} and active eq true`,
    );
  });

  it("refuses NaN and Infinity instead of sending null", () => {
    expect(() => compare("count", "gt", Number.NaN)).toThrow(
      "count gt NaN: a SCIM filter value must be a finite number (JSON has no NaN)",
    );
    expect(() => eq("count", Number.POSITIVE_INFINITY)).toThrow(
      /^count eq Infinity: a SCIM filter value must be a finite number/,
    );
    expect(() => eq("count", Number.NEGATIVE_INFINITY)).toThrow(RangeError);
    expect(eq("count", -1.5)).toBe("count eq -1.5");
  });

  it("builds filters that an RFC 7644 parser reads back as one literal comparison", () => {
    const hostile = 'x" or userName pr or userName eq "y';
    const test = parseFilter(eq("userName", hostile));
    const values: Record<string, string> = { userName: hostile };

    expect(test((path) => values[path])).toBe(true);
    expect(test(() => "someone@example.com")).toBe(false);
  });
});
