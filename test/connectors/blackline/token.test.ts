/** The BlackLine token client follows RFC 6749: sections 2.3.1, 5.1, 5.2 and 7.1. */
import { once } from "node:events";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
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

/**
 * A loopback server that passes each request on to `target` unchanged and its answer back, and
 * keeps each request's `Authorization` and body in `seen`.
 */
async function recordingFront(
  target: string,
  seen: Array<{ authorization: string | undefined; body: string }>,
) {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      seen.push({ authorization: req.headers.authorization, body: body.toString("utf8") });
      const onward = request(new URL(req.url ?? "/", target), {
        method: req.method,
        headers: { ...req.headers, host: new URL(target).host },
      });
      onward.on("response", (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      onward.end(body);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

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
    // A loopback server in front of the simulator keeps what the token request carried.
    const front = await recordingFront(sim.url, seen);
    const api = new BlacklineApi(
      loadBlacklineConfig({
        ...sim.env(),
        CONNECTOR_ACCOUNTING_BASE_URL: front.url,
        CONNECTOR_ACCOUNTING_CLIENT_AUTH: "basic",
      }),
    );
    try {
      await api.token(newRequestContext());
    } finally {
      await front.close();
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
