import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { upstreamId } from "../../lib/connectors/upstreamId";
import { describeIssues } from "../../lib/errors";

/** The rule, written out plainly: a usable string as it is, or a safe integer as its text. */
function usable(value: unknown): boolean {
  if (typeof value === "number") return Number.isSafeInteger(value);
  return (
    typeof value === "string" &&
    value !== "" &&
    value !== "." &&
    value !== ".." &&
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the rule refuses them
    !/[\u0000-\u001f\u007f]/.test(value) &&
    encodable(value)
  );
}

/** A lone surrogate is what encodeURIComponent cannot encode. */
function encodable(value: string): boolean {
  try {
    encodeURIComponent(value);
    return true;
  } catch {
    return false;
  }
}

const record = z.object({ id: upstreamId });
const messageOf = (value: unknown) => {
  const result = record.safeParse({ id: value });
  return result.success ? undefined : describeIssues(result.error.issues, "(body)");
};

describe("upstreamId", () => {
  it("takes a usable string as it is and a safe integer as its text, and refuses everything else", () => {
    const value = fc.oneof(
      fc.string({ unit: "binary", maxLength: 6 }),
      fc.constantFrom("", ".", "..", "\u0000", "a\u007f", "\ud800", "\udc00x", "😀", "-1"),
      fc.integer(),
      fc.double(),
      fc.constantFrom(2 ** 53, -(2 ** 53), 2 ** 60, 1.5),
      fc.constantFrom(null, true, false, undefined, {}, [], [1]),
    );
    fc.assert(
      fc.property(value, (v) => {
        const result = upstreamId.safeParse(v);
        expect(result.success).toBe(usable(v));
        if (result.success) expect(result.data).toBe(String(v));
      }),
      { numRuns: 2_000 },
    );
  });

  it("names what it received when an id is neither a string nor an integer", () => {
    expect(messageOf(true)).toBe(
      "id: Invalid input: expected a string or an integer, received boolean",
    );
    expect(messageOf(undefined)).toBe(
      "id: Invalid input: expected a string or an integer, received undefined",
    );
    expect(messageOf([7])).toBe(
      "id: Invalid input: expected a string or an integer, received array",
    );
    expect(messageOf(1.5)).toBe(
      "id: Invalid input: expected a string or an integer, received the number 1.5",
    );
    expect(messageOf("")).toBe("id: Too small: expected string to have >=1 characters");
  });
});
