/**
 * `resourceLine`, the writer's fast read of a resource's line (finalize takes such a line as it is):
 * whatever it reads is what JSON.parse reads, and the line is exactly what JSON.stringify writes
 * of the parsed record, so copying it is writing the record. Lines it cannot vouch for are left
 * to the parser.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resourceLine } from "../../lib/snapshot/canonicalLine";

/**
 * Strings, now and then with what JSON escapes (quotes, backslashes, controls); digits, non-ASCII
 * and JSON's punctuation throughout.
 */
const text = fc.oneof(
  {
    arbitrary: fc.string({
      unit: fc.constantFrom("a", "Z", "0", "7", " ", "é", "😀", ":", ",", "_", "{", "]"),
      maxLength: 6,
    }),
    weight: 12,
  },
  {
    arbitrary: fc.string({ unit: fc.constantFrom("a", '"', "\\", "\n", "\u0001"), maxLength: 3 }),
    weight: 1,
  },
);
const profileValue = fc.oneof(
  { arbitrary: text, weight: 12 },
  fc.integer(),
  fc.double(),
  fc.boolean(),
);
const resource = fc.record(
  {
    kind: fc.constant("resource"),
    type: text,
    id: text,
    displayName: text,
    status: fc.constantFrom("enabled", "disabled"),
    user: fc.record(
      { login: text, emails: fc.array(text, { maxLength: 3 }), givenName: text, familyName: text },
      { requiredKeys: ["login", "emails"] },
    ),
    profile: fc.dictionary(fc.oneof(text, fc.constant("__proto__")), profileValue, {
      maxKeys: 4,
    }),
  },
  { requiredKeys: ["kind", "type", "id", "displayName"] },
);

describe("resourceLine", () => {
  it("reads the writer's lines of users and groups", () => {
    const user = {
      kind: "resource",
      type: "user",
      id: "1000",
      displayName: "Björn Çelik",
      status: "enabled",
      user: { login: "b@example.com", emails: ["b@example.com"], givenName: "Björn" },
      profile: { jobTitle: "Analyst", timeZoneId: "Europe/Zurich" },
    };
    expect(resourceLine(JSON.stringify(user))).toEqual({
      kind: "resource",
      type: "user",
      id: "1000",
      user: true,
    });
    const team = { kind: "resource", type: "team", id: "7", displayName: "Team 7" };
    expect(resourceLine(JSON.stringify(team))?.user).toBeUndefined();
  });

  it("vouches only for lines that are JSON.stringify's own writing of what JSON.parse reads", () => {
    const spelled = fc.tuple(resource, fc.nat(4)).map(([record, how]) => {
      const line = JSON.stringify(record);
      if (how === 1) return line.replace(":", ": ");
      if (how === 2) return line.replace('"id"', '"id2"');
      if (how === 3) return line.replace(/\}$/, ',"displayName":"again"}');
      return line;
    });
    let read = 0;
    fc.assert(
      fc.property(spelled, (line) => {
        const fast = resourceLine(line);
        if (fast === undefined) return;
        read++;
        const parsed = JSON.parse(line);
        expect(JSON.stringify(parsed)).toBe(line);
        expect(fast).toEqual({
          kind: "resource",
          type: parsed.type,
          id: parsed.id,
          user: parsed.user === undefined ? undefined : true,
        });
      }),
      // A fixed seed: the count below is then the same on every run.
      { numRuns: 3000, seed: 37 },
    );
    // The property is not vacuous: many of the lines were read.
    expect(read).toBeGreaterThan(100);
  });

  it("leaves repeated profile keys, array-index keys and numbers to the parser", () => {
    const head = '{"kind":"resource","type":"user","id":"1","displayName":"x"';
    expect(resourceLine(`${head},"profile":{"a":"1","a":"2"}}`)).toBeUndefined();
    expect(resourceLine(`${head},"profile":{"b":"1","7":"2"}}`)).toBeUndefined();
    expect(resourceLine(`${head},"profile":{"a":1}}`)).toBeUndefined();
    expect(resourceLine(`${head},"profile":{"a":"1","b":"2"}}`)?.id).toBe("1");
  });
});
