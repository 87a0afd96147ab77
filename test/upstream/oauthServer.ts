/**
 * An OAuth 2.0 token endpoint that nobody here wrote: @node-oauth/oauth2-server behind a small
 * loopback HTTP adapter, with an in-memory model for one client and one resource owner.
 */
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import OAuth2Server from "@node-oauth/oauth2-server";

export interface OAuthPeerAccount {
  clientId: string;
  clientSecret: string;
  username: string;
  password: string;
}

export interface OAuthPeer {
  url: string;
  /** Every token request as received: the Authorization header and the form, parsed. */
  requests: Array<{ authorization: string | undefined; form: Record<string, string> }>;
  /** Every answer the server gave: status, headers of note and body. */
  answers: Array<{ status: number; wwwAuthenticate: string | undefined; body: unknown }>;
  close(): Promise<void>;
}

export const TOKEN_LIFETIME_SECONDS = 1800;

/** The token endpoint at both BlackLine paths; every other path is 404. */
export async function startOAuthPeer(account: OAuthPeerAccount): Promise<OAuthPeer> {
  const client = {
    id: account.clientId,
    grants: ["password"],
    accessTokenLifetime: TOKEN_LIFETIME_SECONDS,
  };
  const model = {
    async getClient(clientId: string, clientSecret: string) {
      return clientId === account.clientId && clientSecret === account.clientSecret
        ? client
        : undefined;
    },
    async getUser(username: string, password: string) {
      return username === account.username && password === account.password
        ? { id: username }
        : undefined;
    },
    async saveToken(token: OAuth2Server.Token, c: OAuth2Server.Client, user: OAuth2Server.User) {
      return { ...token, client: c, user };
    },
    async getAccessToken() {
      return undefined;
    },
    async validateScope(_user: OAuth2Server.User, _c: OAuth2Server.Client, scope?: string[]) {
      return scope && scope.length > 0 ? scope : false;
    },
    async generateAccessToken() {
      return randomBytes(24).toString("base64url");
    },
  };
  const oauth = new OAuth2Server({ model, requireClientAuthentication: { password: true } });
  const requests: OAuthPeer["requests"] = [];
  const answers: OAuthPeer["answers"] = [];

  const server = createServer(async (req, res) => {
    const text = await readBody(req);
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path !== "/authorize/connect/token" && path !== "/connect/token") {
      res.writeHead(404).end();
      return;
    }
    const form = Object.fromEntries(new URLSearchParams(text));
    requests.push({ authorization: req.headers.authorization, form });
    const headers = { ...req.headers } as Record<string, string>;
    const basic = decodeBasic(headers.authorization);
    if (basic) headers.authorization = basic;
    const request = new OAuth2Server.Request({
      method: req.method ?? "GET",
      headers,
      query: {},
      body: form,
    });
    const response = new OAuth2Server.Response();
    try {
      await oauth.token(request, response);
    } catch {
      // The handler has put the RFC 6749 section 5.2 error into `response`.
    }
    const status = response.status ?? 500;
    const wwwAuthenticate = response.get("WWW-Authenticate") as string | undefined;
    answers.push({ status, wwwAuthenticate, body: response.body });
    res.writeHead(status, {
      ...(response.headers as Record<string, string>),
      "content-type": "application/json",
    });
    res.end(JSON.stringify(response.body ?? {}));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    answers,
    close: () => new Promise((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  };
}

/**
 * Known deviation of the peer, undone here: node-oauth 5.3.0 reads HTTP Basic with the
 * `basic-auth` package, which does not undo the form-urlencoding that RFC 6749 section 2.3.1
 * puts on the client id and secret before base64. The adapter undoes it and hands node-oauth the
 * plain pair, as the RFC's server would see it (a client id must then hold no colon).
 */
function decodeBasic(authorization: string | undefined): string | undefined {
  const encoded = /^Basic\s+(\S+)$/i.exec(authorization ?? "")?.[1];
  if (!encoded) return undefined;
  const pair = Buffer.from(encoded, "base64").toString("utf8");
  const colon = pair.indexOf(":");
  if (colon < 0) return undefined;
  const decode = (part: string) => new URLSearchParams(`v=${part}`).get("v") ?? "";
  const plain = `${decode(pair.slice(0, colon))}:${decode(pair.slice(colon + 1))}`;
  return `Basic ${Buffer.from(plain, "utf8").toString("base64")}`;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
