/**
 * OAuth tier: the BlackLine token client against @node-oauth/oauth2-server, an OAuth 2.0 server
 * implementation nobody here wrote, with RFC 6749's awkward characters and its real error answers.
 */
import { afterEach, describe, expect, it } from "vitest";
import { loadBlacklineConfig } from "../../lib/connectors/blackline";
import { BlacklineApi } from "../../lib/connectors/blackline/BlacklineApi";
import { CredentialsRejectedError } from "../../lib/errors";
import { newRequestContext } from "../../lib/http";
import { FAST_RETRY } from "../helpers/blackline";
import {
  type OAuthPeer,
  type OAuthPeerAccount,
  startOAuthPeer,
  TOKEN_LIFETIME_SECONDS,
} from "./oauthServer";

let peer: OAuthPeer;
afterEach(() => peer.close());

const SCOPE = "DataIngestionAPI instance_3f2504e0-4f89-11d3-9a0c-0305e82c3301";

/**
 * RFC 6749 appendix A: client_id and client_secret are VSCHAR (printable ASCII, space included);
 * username and password are any Unicode but CR and LF.
 */
const ACCOUNT: OAuthPeerAccount = {
  clientId: "blackline client +/=%&",
  clientSecret: "s3cret +/=%& :==",
  username: "api.ädmin ø +/=%&",
  password: "kéy 日本 +/=%& ==",
};

async function tokenWith(clientAuth: "body" | "basic", overrides: Partial<OAuthPeerAccount> = {}) {
  peer = await startOAuthPeer(ACCOUNT);
  const sent = { ...ACCOUNT, ...overrides };
  const config = loadBlacklineConfig({
    CONNECTOR_ACCOUNTING_BASE_URL: peer.url,
    CONNECTOR_ACCOUNTING_CLIENT_ID: sent.clientId,
    CONNECTOR_ACCOUNTING_CLIENT_SECRET: sent.clientSecret,
    CONNECTOR_ACCOUNTING_USERNAME: sent.username,
    CONNECTOR_ACCOUNTING_API_KEY: sent.password,
    CONNECTOR_ACCOUNTING_SCOPE: SCOPE,
    CONNECTOR_ACCOUNTING_CLIENT_AUTH: clientAuth,
  });
  return new BlacklineApi(config, { retry: FAST_RETRY }).token(newRequestContext());
}

describe("BlackLine token flow against @node-oauth/oauth2-server", () => {
  for (const clientAuth of ["body", "basic"] as const) {
    it(`${clientAuth}: a token for credentials with + / = % &, spaces and non-ASCII`, async () => {
      const before = Date.now();
      const token = await tokenWith(clientAuth);

      expect(peer.answers).toMatchObject([
        { status: 200, body: { token_type: "Bearer", expires_in: expect.any(Number) } },
      ]);
      expect(peer.answers[0]?.body).toMatchObject({ access_token: token.value });
      expect(token.expiresAt).toBeGreaterThanOrEqual(before + (TOKEN_LIFETIME_SECONDS - 2) * 1000);
      const [request] = peer.requests;
      expect(request?.form).toMatchObject({
        grant_type: "password",
        username: ACCOUNT.username,
        password: ACCOUNT.password,
        scope: SCOPE,
      });
      if (clientAuth === "body") {
        expect(request?.authorization).toBeUndefined();
        expect(request?.form).toMatchObject({
          client_id: ACCOUNT.clientId,
          client_secret: ACCOUNT.clientSecret,
        });
      } else {
        expect(request?.authorization).toMatch(/^Basic [A-Za-z0-9+/]+=*$/);
        expect(request?.form).not.toHaveProperty("client_id");
        expect(request?.form).not.toHaveProperty("client_secret");
      }
    });
  }

  it("body, wrong secret: the server's 400 invalid_client, and a message naming the settings", async () => {
    const error = await tokenWith("body", { clientSecret: "wrong" }).catch((e: unknown) => e);

    expect(peer.answers).toEqual([
      {
        status: 400,
        wwwAuthenticate: undefined,
        body: { error: "invalid_client", error_description: "Invalid client: client is invalid" },
      },
    ]);
    expect(error).toBeInstanceOf(CredentialsRejectedError);
    expect((error as Error).message).toMatch(
      /^BlackLine rejected the token request \(invalid_client: Invalid client: client is invalid\)\. Check CONNECTOR_ACCOUNTING_CLIENT_ID and CONNECTOR_ACCOUNTING_CLIENT_SECRET, and CONNECTOR_ACCOUNTING_CLIENT_AUTH \(body: /,
    );
  });

  it("basic, wrong secret: the server's 401 with WWW-Authenticate, and a message naming the settings", async () => {
    const error = await tokenWith("basic", { clientSecret: "wrong" }).catch((e: unknown) => e);

    expect(peer.answers).toEqual([
      {
        status: 401,
        wwwAuthenticate: 'Basic realm="Service"',
        body: { error: "invalid_client", error_description: "Invalid client: client is invalid" },
      },
    ]);
    expect(error).toBeInstanceOf(CredentialsRejectedError);
    expect((error as Error).message).toMatch(
      /Check CONNECTOR_ACCOUNTING_CLIENT_ID and CONNECTOR_ACCOUNTING_CLIENT_SECRET, and CONNECTOR_ACCOUNTING_CLIENT_AUTH \(basic: /,
    );
  });

  for (const clientAuth of ["body", "basic"] as const) {
    it(`${clientAuth}, wrong API key: the server's invalid_grant, and a message about the user's key`, async () => {
      const error = await tokenWith(clientAuth, { password: "not the key" }).catch(
        (e: unknown) => e,
      );

      expect(peer.answers).toEqual([
        {
          status: 400,
          wwwAuthenticate: undefined,
          body: {
            error: "invalid_grant",
            error_description: "Invalid grant: user credentials are invalid",
          },
        },
      ]);
      expect((error as Error).message).toMatch(
        /\(invalid_grant: Invalid grant: user credentials are invalid\)\. Check CONNECTOR_ACCOUNTING_USERNAME and CONNECTOR_ACCOUNTING_API_KEY/,
      );
    });
  }
});
