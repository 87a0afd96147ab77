import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { CONNECTORS } from "../../lib/connectors";
import {
  CONFIGURATION_PAGE,
  configurationSections,
  fieldsOf,
  renderConfigurationPage,
  settingRow,
} from "../../scripts/configReference";
import { ROOT } from "./repositoryFiles";

describe("docs/configuration.md", () => {
  it("is what the schemas say today (else run `npm run docs` and commit the page)", async () => {
    const committed = await readFile(join(ROOT, CONFIGURATION_PAGE), "utf8");
    expect(committed).toBe(renderConfigurationPage());
  });

  it("documents exactly the variables each connector reads, its secrets marked", () => {
    for (const connector of CONNECTORS) {
      expect(Object.keys(fieldsOf(connector.settings)).sort()).toEqual(
        [...connector.variables].sort(),
      );
      const section = configurationSections().find((s) => s.title.includes(connector.display));
      const secrets = section?.rows.filter((row) => row.secret).map((row) => row.variable);
      expect(secrets?.sort()).toEqual([...connector.secrets].sort());
    }
  });

  it("refuses a setting without a description or a type in words", () => {
    expect(() => settingRow("X", z.string(), false)).toThrow(/X has no description/);
    expect(() => settingRow("X", z.number().describe("a number"), false)).toThrow(
      /X: say its type in words/,
    );
    expect(settingRow("X", z.string().optional().describe("text"), true)).toEqual({
      variable: "X",
      type: "text",
      default: "unset",
      secret: true,
      meaning: "text",
    });
  });
});
