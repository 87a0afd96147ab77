import { faultyPage } from "../faultSchedule";
import type { FaultSettings } from "../faults";
import { type SimRequest, type SimResponse, startSimServer } from "../httpServer";
import { SimTokens, type TokenSettings } from "../tokens";
import { generateTenant, type SimUser, type Tenant, type TenantSize } from "./tenant";

export interface BlacklineSimCredentials {
  clientId: string;
  clientSecret: string;
  /** An administrator: reads everything. */
  username: string;
  apiKey: string;
  /** A user without the administrator role: gets a token, then 403 on every read. */
  viewerUsername: string;
  viewerApiKey: string;
}

/**
 * How the lists page, and the ways a server may depart from `page` (from 1) and `pageSize`; with
 * none set, pages of up to 1000 with `totalItems`. lib/simulators/README.md lists them.
 */
export interface BlacklinePagingQuirks {
  /** Largest page served, whatever `pageSize` asks for (silently: the answer does not say so). */
  maxPageSize?: number;
  /** Serve page 1 whatever `page` asks for (a server that ignores paging). */
  ignorePaging?: boolean;
  /** Leave `totalItems` out of list answers (the client reads it only when present). */
  omitTotal?: boolean;
}

export interface BlacklineSimulatorOptions extends TokenSettings, BlacklinePagingQuirks {
  seed?: number;
  size?: TenantSize;
  credentials?: Partial<BlacklineSimCredentials>;
  /**
   * How the token endpoint takes the client's credentials (RFC 6749 section 2.3.1): `any`
   * (default) reads HTTP Basic or the form body; `basic` only the Authorization header (the
   * form's pair is ignored, and a request without Basic is 401 invalid_client with
   * `WWW-Authenticate: Basic`); `body` only the form (an Authorization header is ignored).
   */
  clientAuth?: "any" | "basic" | "body";
  /** The token answer's `token_type`; `null` leaves it out. Default `Bearer`. */
  tokenType?: string | null;
  /** Leave `expires_in` out of token answers (it is only RECOMMENDED, RFC 6749 section 5.1). */
  omitExpiresIn?: boolean;
  faults?: FaultSettings;
}

export interface BlacklineSimulator {
  url: string;
  tenant: Tenant;
  credentials: BlacklineSimCredentials;
  /** A valid scope for this tenant. */
  scope: string;
  /** Requests per route (`token`, `users`, `teams`, `roles`, `team_users`, `user_teams`). */
  readonly stats: {
    requests: number;
    /** Answered 429 by the enforced `limit` or `quota`. */
    throttled: number;
    /** Requests `faults.schedule` hit, and pages or data `faults.pages` or `faults.change` changed. */
    faulted: number;
    byRoute: Record<string, number>;
    /** When each request arrived (epoch ms). */
    arrivals: readonly number[];
    /** The upstream's own time per answer, on average (`RunningSimulator.meanAnswerMs`). */
    readonly meanAnswerMs: number | undefined;
  };
  /** Every access token issued so far (tests search outputs for them). */
  issuedTokens(): string[];
  /** Faults may be changed while the simulator runs. */
  faults: FaultSettings;
  /** The CONNECTOR_ACCOUNTING_* variables that point the connector at this simulator. */
  env(): Record<string, string>;
  close(): Promise<void>;
}

const DEFAULT_SIM_CREDENTIALS: BlacklineSimCredentials = {
  clientId: "sim-client",
  clientSecret: "sim-client-secret-7f3a9c",
  username: "api.admin",
  apiKey: "sim-api-key-91c2e0b7",
  viewerUsername: "api.viewer",
  viewerApiKey: "sim-viewer-key-44d1aa",
};

const DEFAULT_TENANT_SIZE: TenantSize = { users: 500, teams: 40, roles: 12 };

/** A BlackLine API on loopback: the token endpoint's real answers, lists, memberships and faults. */
export async function startBlacklineSimulator(
  options: BlacklineSimulatorOptions = {},
): Promise<BlacklineSimulator> {
  const tenant = generateTenant(options.size ?? DEFAULT_TENANT_SIZE, options.seed ?? 1);
  const credentials = { ...DEFAULT_SIM_CREDENTIALS, ...options.credentials };
  const maxPageSize = options.maxPageSize ?? 1000;
  const tokens = new SimTokens<{ admin: boolean }>(options);
  const byRoute: Record<string, number> = {};
  const usersById = new Map(tenant.users.map((u) => [u.id, u]));
  const teamsById = new Map(tenant.teams.map((t) => [t.id, t]));

  const count = (route: string) => {
    byRoute[route] = (byRoute[route] ?? 0) + 1;
  };

  const handler = (request: SimRequest): SimResponse => {
    const path = request.url.pathname;
    if (
      request.method === "POST" &&
      (path === "/authorize/connect/token" || path === "/connect/token")
    ) {
      count("token");
      return issueToken(request);
    }
    if (request.method !== "GET") return { status: 405, body: { message: "Method not allowed" } };
    const denied = checkBearer(request);
    if (denied) return denied;

    if (path === "/v1/users") {
      count("users");
      const answer = list(request, tenant.users);
      changeUsers(answer);
      return answer;
    }
    if (path === "/v1/teams") {
      count("teams");
      return list(request, tenant.teams);
    }
    if (path === "/v1/roles") {
      count("roles");
      return list(request, tenant.roles);
    }
    const teamUsers = /^\/v1\/teams\/([^/]+)\/users$/.exec(path);
    if (teamUsers) {
      count("team_users");
      const members = tenant.teamMembers.get(Number(teamUsers[1]));
      if (!members) return notFound();
      return list(
        request,
        members.map((id) => usersById.get(id)),
      );
    }
    const userTeams = /^\/v1\/users\/([^/]+)\/teams$/.exec(path);
    if (userTeams) {
      count("user_teams");
      const teams = tenant.userTeams.get(Number(userTeams[1]));
      if (!teams) return notFound();
      return list(
        request,
        teams.map((id) => teamsById.get(id)),
      );
    }
    return notFound();
  };

  function issueToken(request: SimRequest): SimResponse {
    const form = new URLSearchParams(request.body);
    const clientAuth = options.clientAuth ?? "any";
    const basic =
      clientAuth === "body" ? undefined : basicCredentials(request.headers.authorization);
    const client =
      basic ??
      (clientAuth === "basic"
        ? undefined
        : { id: form.get("client_id"), secret: form.get("client_secret") });
    if (form.get("grant_type") !== "password") return oauthError("unsupported_grant_type");
    if (!client && clientAuth === "basic") {
      return {
        ...oauthError("invalid_client"),
        status: 401,
        headers: { "www-authenticate": 'Basic realm="token"' },
      };
    }
    if (client?.id !== credentials.clientId || client.secret !== credentials.clientSecret) {
      // RFC 6749 section 5.2: a client that tried the Authorization header gets 401.
      return basic
        ? {
            ...oauthError("invalid_client"),
            status: 401,
            headers: { "www-authenticate": 'Basic realm="token"' },
          }
        : oauthError("invalid_client");
    }
    const instances = (form.get("scope") ?? "")
      .split(/\s+/)
      .filter((t) => t.startsWith("instance_"));
    if (instances.length !== 1 || instances[0] !== `instance_${tenant.instanceGuid}`) {
      return oauthError("invalid_grant", "Invalid instance GUID");
    }
    const username = form.get("username");
    const password = form.get("password");
    const admin = username === credentials.username && password === credentials.apiKey;
    const viewer = username === credentials.viewerUsername && password === credentials.viewerApiKey;
    if (!admin && !viewer) return oauthError("invalid_grant", "invalid_username_or_password");
    const { token, lifetimeSeconds } = tokens.issue({ admin });
    const tokenType = options.tokenType === undefined ? "Bearer" : options.tokenType;
    return {
      status: 200,
      body: {
        access_token: token,
        ...(options.omitExpiresIn ? {} : { expires_in: lifetimeSeconds }),
        ...(tokenType === null ? {} : { token_type: tokenType }),
      },
    };
  }

  function checkBearer(request: SimRequest): SimResponse | undefined {
    const claims = tokens.check(request.headers.authorization);
    if (!claims) return { status: 401, body: { message: "Unauthorized" } };
    if (!claims.admin) return { status: 403, body: { message: "Forbidden" } };
    return undefined;
  }

  function list(request: SimRequest, items: readonly unknown[]): SimResponse {
    const page = options.ignorePaging
      ? 1
      : Math.max(1, Number(request.url.searchParams.get("page") ?? 1));
    const asked = Number(request.url.searchParams.get("pageSize") ?? 100);
    const size = Math.min(Math.max(1, asked), maxPageSize);
    const start = (page - 1) * size;
    return {
      status: 200,
      body: {
        items: faultyPage(items, start, size, simulator.faults.pages, server.countFault),
        ...(options.omitTotal ? {} : { totalItems: items.length }),
      },
    };
  }

  let changed = false;
  /** The `change` fault: once the first page of users (more than one) has been read. */
  function changeUsers(answer: SimResponse): void {
    const change = simulator.faults.change;
    const served = (answer.body as { items: SimUser[] }).items;
    if (!change || changed || served.length < 2) return;
    changed = true;
    server.countFault();
    if (change === "add_user") {
      const last = tenant.users.at(-1) as SimUser;
      const id = Math.max(...tenant.users.map((u) => u.id)) + 1;
      const login = `added.${id}@example.com`;
      tenant.users.unshift({ ...last, id, loginId: login, email: login, roles: undefined });
      tenant.userTeams.set(id, []);
      usersById.set(id, tenant.users[0] as SimUser);
      return;
    }
    const removed = served.find((u) => (tenant.userTeams.get(u.id) ?? []).length === 0);
    if (!removed) throw new Error("change remove_user: no user without teams on the first page");
    tenant.users.splice(tenant.users.indexOf(removed), 1);
    tenant.userTeams.delete(removed.id);
  }

  const server = await startSimServer(handler, () => simulator.faults);
  const scope = `DataIngestionAPI ReportsAPI instance_${tenant.instanceGuid}`;
  const simulator: BlacklineSimulator = {
    url: server.url,
    tenant,
    credentials,
    scope,
    stats: {
      get requests() {
        return server.requests;
      },
      get throttled() {
        return server.throttled;
      },
      get faulted() {
        return server.faulted;
      },
      byRoute,
      arrivals: server.arrivals,
      get meanAnswerMs() {
        return server.meanAnswerMs;
      },
    },
    faults: options.faults ?? {},
    issuedTokens: () => tokens.issued(),
    env: () => ({
      CONNECTOR_ACCOUNTING_BASE_URL: server.url,
      CONNECTOR_ACCOUNTING_CLIENT_ID: credentials.clientId,
      CONNECTOR_ACCOUNTING_CLIENT_SECRET: credentials.clientSecret,
      CONNECTOR_ACCOUNTING_USERNAME: credentials.username,
      CONNECTOR_ACCOUNTING_API_KEY: credentials.apiKey,
      CONNECTOR_ACCOUNTING_SCOPE: scope,
    }),
    close: () => server.close(),
  };
  return simulator;
}

/**
 * The client pair of an HTTP Basic header, each half form-urlencoded first (RFC 6749 section
 * 2.3.1); undefined when the header is not Basic or does not decode.
 */
function basicCredentials(
  authorization: string | undefined,
): { id: string; secret: string } | undefined {
  const encoded = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(authorization ?? "")?.[1];
  if (!encoded) return undefined;
  const pair = Buffer.from(encoded, "base64").toString("utf8");
  const colon = pair.indexOf(":");
  if (colon < 0) return undefined;
  const decode = (part: string) => new URLSearchParams(`v=${part}`).get("v") ?? "";
  return { id: decode(pair.slice(0, colon)), secret: decode(pair.slice(colon + 1)) };
}

function oauthError(error: string, description?: string): SimResponse {
  return {
    status: 400,
    body: { error, ...(description ? { error_description: description } : {}) },
  };
}

function notFound(): SimResponse {
  return { status: 404, body: { message: "Not found" } };
}
