/**
 * An independent SCIM 2.0 service provider for the peer tests: the npm package scimmy does the
 * protocol (filters, paging, PatchOp, error bodies); this file only stores users in memory and
 * serves scimmy over node:http on loopback, as scimmy-routers would over express.
 *
 * Given `quirks` (the simulators' `ScimPagingQuirks`), a list request's `startIndex` and `count`
 * are first turned into the window such a server serves, and scimmy pages that window; with
 * `omitTotal` the answer loses `totalResults`. scimmy itself already reports in `itemsPerPage` the
 * `count` asked, not the number served (the `itemsPerPage: "asked"` quirk). Valimail's `/auth`
 * and its `/accounts/{slug}/scim/v2/Users` path are answered too, so the Valimail connector can
 * sync against scimmy. scimmy's resource declarations are global: one peer at a time.
 */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import SCIMMY from "scimmy";
import { type ScimPagingQuirks, scimWindow } from "../../lib/simulators/valimail";

type StoredUser = Record<string, unknown> & { id: string; userName: string };

export interface ScimPeer {
  url: string;
  token: string;
  users: Map<string, StoredUser>;
  requests: Array<{ method: string; path: string; accept?: string; contentType?: string }>;
  /** The CONNECTOR_EMAILAUTH_* variables that point the Valimail connector at this peer. */
  env(): Record<string, string>;
  close(): Promise<void>;
}

export async function startScimPeer(quirks?: ScimPagingQuirks): Promise<ScimPeer> {
  const users = new Map<string, StoredUser>();
  let nextId = 1;
  SCIMMY.Resources.declare(SCIMMY.Resources.User, {
    egress: async (resource: { id?: string; filter?: { match(values: unknown[]): unknown[] } }) => {
      if (resource.id) {
        const user = users.get(resource.id);
        if (!user)
          throw new SCIMMY.Types.Error(404, null as never, `User with ID ${resource.id} not found`);
        return user;
      }
      const all = [...users.values()];
      return resource.filter ? resource.filter.match(all) : all;
    },
    ingress: async (resource: { id?: string }, data: Record<string, unknown>) => {
      const userName = String(data.userName);
      const clash = [...users.values()].find(
        (u) => u.userName.toLowerCase() === userName.toLowerCase() && u.id !== resource.id,
      );
      if (clash) throw new SCIMMY.Types.Error(409, "uniqueness", `userName ${userName} is taken`);
      const id = resource.id ?? String(nextId++);
      const stored = { ...JSON.parse(JSON.stringify(data)), id, meta: undefined } as StoredUser;
      users.set(id, stored);
      return stored;
    },
    degress: async (resource: { id?: string }) => {
      if (resource.id) users.delete(resource.id);
    },
  } as never);

  const token = "peer-token-0123456789";
  const requests: ScimPeer["requests"] = [];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    requests.push({
      method: req.method ?? "GET",
      path: url.pathname + url.search,
      ...(req.headers.accept ? { accept: req.headers.accept } : {}),
      ...(req.headers["content-type"] ? { contentType: req.headers["content-type"] } : {}),
    });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const send = (status: number, body?: unknown) => {
      res.writeHead(status, body === undefined ? {} : { "content-type": "application/scim+json" });
      res.end(body === undefined ? "" : JSON.stringify(body));
    };
    if (req.method === "POST" && url.pathname === "/auth") {
      const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ token, "expires-at": expiresAt }));
      return;
    }
    try {
      if (req.headers.authorization !== `Bearer ${token}`) {
        throw new SCIMMY.Types.Error(401, null as never, "Authorization failure");
      }
      const match = /^(?:\/accounts\/[^/]+)?\/scim\/v2\/Users(?:\/([^/]+))?$/.exec(url.pathname);
      if (!match) throw new SCIMMY.Types.Error(404, null as never, "Endpoint not found");
      const id = match[1] === undefined ? undefined : decodeURIComponent(match[1]);
      const query = Object.fromEntries(url.searchParams) as Record<string, string>;
      const window =
        quirks && id === undefined ? scimWindow(quirks, url.searchParams, users.size) : undefined;
      const config = {
        ...query,
        ...(query.startIndex ? { startIndex: Number(query.startIndex) } : {}),
        ...(query.count ? { count: Number(query.count) } : {}),
        ...(window ? { startIndex: window.offset + 1, count: window.size } : {}),
      };
      const body =
        chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
      const User = SCIMMY.Resources.User;
      // scimmy takes the query config as the first argument when there is no id.
      const Collection = User as unknown as new (config: object) => InstanceType<typeof User>;
      if (req.method === "GET" && id) send(200, await new User(id, config).read());
      else if (req.method === "GET") {
        const list = JSON.parse(JSON.stringify(await new Collection(config).read()));
        if (quirks?.omitTotal) delete list.totalResults;
        send(200, list);
      } else if (req.method === "POST" && !id) send(201, await new Collection(config).write(body));
      else if (req.method === "PATCH" && id) {
        const value = await new User(id, config).patch(body);
        send(value ? 200 : 204, value);
      } else throw new SCIMMY.Types.Error(405, null as never, "Method not allowed");
    } catch (error) {
      const status = (error as { status?: number }).status ?? 500;
      send(status, new SCIMMY.Messages.Error(error as never));
    }
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    users,
    requests,
    env: () => ({
      CONNECTOR_EMAILAUTH_BASE_URL: `http://127.0.0.1:${port}`,
      CONNECTOR_EMAILAUTH_CLIENT_ID: "peer-client",
      CONNECTOR_EMAILAUTH_APP_ID: "peer-app",
      CONNECTOR_EMAILAUTH_SLUG: "peer",
    }),
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}
