import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { telemetry } from "../../lib/cloud/aws/powertools";
import { loadBlacklineConfig } from "../../lib/connectors/blackline";
import { basicAuthorization } from "../../lib/connectors/blackline/BlacklineApi";
import { describeErrorBody, HttpStatusError } from "../../lib/http";
import { redact, redactValue, registerSecret } from "../../lib/redact";
import { BLACKLINE_CLIENT_ID, formsOf, leakChecker, SECRETS } from "./secretForms";

/** Redaction of every form of a secret that the project sends. */

afterEach(() => {
  vi.restoreAllMocks();
});

describe("redaction", () => {
  it("every spelling of a registered secret is replaced, whatever surrounds it (property)", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 4, maxLength: 30 }).filter((s) => s.trim().length >= 4),
        fc.string(),
        fc.string(),
        (secret, before, after) => {
          registerSecret(secret);
          const spellings = [
            secret,
            encodeURIComponent(secret),
            new URLSearchParams({ v: secret }).toString().slice(2),
            JSON.stringify(secret).slice(1, -1),
          ];
          for (const spelling of spellings) {
            expect(redact(`${before}${spelling}${after}`)).not.toContain(spelling);
          }
        },
      ),
      { seed: 7, numRuns: 200 },
    );
  });

  it("a secret trimmed from its file, a form body, a JSON body and an HTTP Basic header are all redacted", () => {
    const config = loadBlacklineConfig({
      CONNECTOR_ACCOUNTING_CLIENT_ID: BLACKLINE_CLIENT_ID,
      CONNECTOR_ACCOUNTING_CLIENT_SECRET: `  ${SECRETS.blacklineClientSecret}\n`,
      CONNECTOR_ACCOUNTING_ENVIRONMENT: "us2",
      CONNECTOR_ACCOUNTING_USERNAME: "api.user",
      CONNECTOR_ACCOUNTING_API_KEY: SECRETS.blacklineApiKey,
      CONNECTOR_ACCOUNTING_SCOPE: "DataIngestionAPI instance_3f2504e0-4f89-11d3-9a0c-0305e82c3301",
      CONNECTOR_ACCOUNTING_CLIENT_AUTH: "basic",
    });
    const header = basicAuthorization(config.clientId, config.clientSecret);
    const sent = [
      header,
      new URLSearchParams({
        client_secret: config.clientSecret,
        password: config.apiKey,
      }).toString(),
      JSON.stringify({ secret: config.clientSecret, key: config.apiKey }),
    ].join("\n");
    const leaks = leakChecker(
      [SECRETS.blacklineClientSecret, SECRETS.blacklineApiKey],
      [header.slice(6)],
    );
    expect(leaks(sent).length).toBeGreaterThan(0);
    expect(leaks(redact(sent))).toEqual([]);
  });

  it("an upstream error body that echoes a secret past the quoting limit leaves no piece of it", () => {
    registerSecret(SECRETS.valimailAppId);
    for (let pad = 140; pad <= 200; pad++) {
      const body = {
        error: "invalid_client",
        error_description: `${"x".repeat(pad)} ${SECRETS.valimailAppId}`,
      };
      const error = new HttpStatusError({
        status: 401,
        request: { method: "POST", path: "/auth" },
        body,
        detail: describeErrorBody(body),
      });
      expect(leakChecker([SECRETS.valimailAppId])(error.message), `padding ${pad}`).toEqual([]);
    }
  });

  it("structured log fields are redacted value by value: a secret of digits cannot break a line", () => {
    registerSecret("20261123");
    const out: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
      out.push(String(chunk));
      return true;
    });
    const consoleSpy = vi
      .spyOn(console, "info")
      .mockImplementation((line) => out.push(String(line)));
    expect(() =>
      telemetry.logger.info("counted", { requests: 1_202_611_239, note: "x 20261123 y" }),
    ).not.toThrow();
    consoleSpy.mockRestore();
    // The number is a number, not a secret; the string that holds the secret is redacted.
    expect(out.join("")).toContain('"requests":1202611239');
    expect(out.join("")).toContain('"note":"x [REDACTED] y"');
    expect(
      redactValue({ n: 1_202_611_239, s: ["20261123"], e: new Error("bad 20261123") }),
    ).toEqual({
      n: 1_202_611_239,
      s: ["[REDACTED]"],
      e: { name: "Error", message: "bad [REDACTED]" },
    });
  });

  it("structured fields: any structure keeps its shape, and no string in it keeps a secret (property)", () => {
    const secret = "Zx9-structured+secret/=";
    registerSecret(secret);
    const withSecret = fc
      .jsonValue()
      .map((value) => ({ value, note: `a ${secret} b`, [secret]: [secret, 1] }));
    fc.assert(
      fc.property(withSecret, (fields) => {
        const text = JSON.stringify(redactValue(fields));
        expect(() => JSON.parse(text)).not.toThrow();
        expect(leakChecker([secret])(text)).toEqual([]);
        expect(Object.keys(JSON.parse(text) as object)).toHaveLength(3);
      }),
      { seed: 11, numRuns: 100 },
    );
  });

  it("formsOf covers what the tests look for", () => {
    expect(formsOf(" a b+c ")).toContain("a+b%2Bc");
  });
});
