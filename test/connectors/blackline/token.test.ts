/** The BlackLine token client follows RFC 6749: sections 2.3.1, 5.1, 5.2 and 7.1. */
import { afterEach, describe, expect, it } from "vitest";
import { loadBlacklineConfig } from "../../../lib/connectors/blackline";
import { BlacklineApi } from "../../../lib/connectors/blackline/BlacklineApi";
import { DEFAULT_TOKEN_LIFETIME_SECONDS } from "../../../lib/connectors/blackline/constants";
import { ConfigError, CredentialsRejectedError } from "../../../lib/errors";
import { newRequestContext, UnexpectedResponseError } from "../../../lib/http";
import {
  type BlacklineSimulator,
  type BlacklineSimulatorOptions,
  startBlacklineSimulator,
} from "../../../lib/simulators/blackline";
import { FAST_RETRY } from "../../helpers/blackline";

let sim: BlacklineSimulator;
afterEach(() => sim.close());

const SMALL = { users: 3, teams: 1, roles: 1 };

async function tokenFrom(options: BlacklineSimulatorOptions, env: Record<string, string> = {}) {
  sim = await startBlacklineSimulator({ seed: 3, size: SMALL, ...options });
  const api = new BlacklineApi(loadBlacklineConfig({ ...sim.env(), ...env }), {
    retry: FAST_RETRY,
  });
  return api.token(newRequestContext());
}

describe("token answers (RFC 6749 section 5.1)", () => {
  it("without expires_in, the token lives the documented default lifetime", async () => {
    const before = Date.now();
    const token = await tokenFrom({ omitExpiresIn: true });

    expect(token.value).toEqual(expect.any(String));
    expect(token.expiresAt).toBeGreaterThanOrEqual(before + DEFAULT_TOKEN_LIFETIME_SECONDS * 1000);
    expect(token.expiresAt).toBeLessThanOrEqual(Date.now() + DEFAULT_TOKEN_LIFETIME_SECONDS * 1000);
  });

  for (const type of ["bearer", "BEARER", "Bearer"]) {
    it(`token_type ${type} is Bearer (the value is case-insensitive)`, async () => {
      await expect(tokenFrom({ tokenType: type })).resolves.toMatchObject({
        value: expect.any(String),
      });
    });
  }

  it("a token type other than Bearer is refused, never used as Bearer (section 7.1)", async () => {
    const error = await tokenFrom({ tokenType: "mac" }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect((error as Error).message).toBe(
      'BlackLine token endpoint: token_type is "mac", and this connector can use only Bearer tokens (RFC 6750); ask BlackLine for a Bearer token',
    );
    expect(sim.stats.byRoute.users).toBeUndefined();
  });
});

describe("client authentication (RFC 6749 section 2.3.1)", () => {
  const special = {
    clientId: "client +/=%& id ü",
    clientSecret: "s3cr:t +/=%& ß€ 日本",
  };

  for (const method of ["body", "basic"] as const) {
    it(`${method}: credentials with + / = % &, spaces and non-ASCII are accepted`, async () => {
      await expect(
        tokenFrom(
          { credentials: special, clientAuth: method },
          { CONNECTOR_ACCOUNTING_CLIENT_AUTH: method },
        ),
      ).resolves.toMatchObject({ value: expect.any(String) });
    });
  }

  it("basic sends the pair form-urlencoded, then base64, and leaves it out of the form", async () => {
    const seen: Array<{ authorization: string | undefined; body: string }> = [];
    sim = await startBlacklineSimulator({ seed: 3, size: SMALL, credentials: special });
    const api = new BlacklineApi(
      loadBlacklineConfig({ ...sim.env(), CONNECTOR_ACCOUNTING_CLIENT_AUTH: "basic" }),
    );
    const original = globalThis.fetch;
    globalThis.fetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      seen.push({
        authorization: headers.get("authorization") ?? undefined,
        body: String(init?.body),
      });
      return original(input, init);
    }) as typeof fetch;
    try {
      await api.token(newRequestContext());
    } finally {
      globalThis.fetch = original;
    }

    const expected = `${encodeURIComponent("client +/=%& id ü").replace(/%20/g, "+")}:${encodeURIComponent("s3cr:t +/=%& ß€ 日本").replace(/%20/g, "+")}`;
    expect(seen[0]?.authorization).toBe(`Basic ${Buffer.from(expected).toString("base64")}`);
    const form = new URLSearchParams(seen[0]?.body);
    expect(form.has("client_id")).toBe(false);
    expect(form.has("client_secret")).toBe(false);
    expect(form.get("grant_type")).toBe("password");
  });

  it("body against a Basic-only server: invalid_client names CONNECTOR_ACCOUNTING_CLIENT_AUTH", async () => {
    const error = await tokenFrom({ clientAuth: "basic" }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(CredentialsRejectedError);
    expect((error as Error).message).toMatch(
      /^BlackLine rejected the token request \(invalid_client\)\. .*CONNECTOR_ACCOUNTING_CLIENT_AUTH is body.*asks for HTTP Basic.*set CONNECTOR_ACCOUNTING_CLIENT_AUTH=basic/,
    );
  });

  it("basic against a body-only server: invalid_client names CONNECTOR_ACCOUNTING_CLIENT_AUTH", async () => {
    const error = await tokenFrom(
      { clientAuth: "body" },
      { CONNECTOR_ACCOUNTING_CLIENT_AUTH: "basic" },
    ).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(CredentialsRejectedError);
    expect((error as Error).message).toMatch(
      /Check CONNECTOR_ACCOUNTING_CLIENT_ID and CONNECTOR_ACCOUNTING_CLIENT_SECRET, and CONNECTOR_ACCOUNTING_CLIENT_AUTH \(basic: .*set CONNECTOR_ACCOUNTING_CLIENT_AUTH=body\)/,
    );
  });

  it("a wrong secret sent by the default method still names every setting to check", async () => {
    const error = await tokenFrom({}, { CONNECTOR_ACCOUNTING_CLIENT_SECRET: "wrong-secret" }).catch(
      (e: unknown) => e,
    );

    expect((error as Error).message).toMatch(
      /Check CONNECTOR_ACCOUNTING_CLIENT_ID and CONNECTOR_ACCOUNTING_CLIENT_SECRET, and CONNECTOR_ACCOUNTING_CLIENT_AUTH \(body/,
    );
  });

  it("CONNECTOR_ACCOUNTING_CLIENT_AUTH defaults to body and accepts only body or basic", async () => {
    sim = await startBlacklineSimulator({ seed: 3, size: SMALL });

    expect(loadBlacklineConfig(sim.env()).clientAuth).toBe("body");
    expect(
      loadBlacklineConfig({ ...sim.env(), CONNECTOR_ACCOUNTING_CLIENT_AUTH: "basic" }).clientAuth,
    ).toBe("basic");
    const error = (() => {
      try {
        loadBlacklineConfig({ ...sim.env(), CONNECTOR_ACCOUNTING_CLIENT_AUTH: "header" });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(
      /CONNECTOR_ACCOUNTING_CLIENT_AUTH: "header" is not a client authentication method; use body \(client_id and client_secret in the form\) or basic \(HTTP Basic\)/,
    );
  });
});
