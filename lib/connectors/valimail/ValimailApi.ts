import { CredentialsRejectedError } from "../../errors";
import {
  type AccessToken,
  askingAhead,
  type HttpClient,
  HttpStatusError,
  parseEach,
  parseResponse,
  printable,
  type RequestContext,
  TokenCache,
  type UpstreamOptions,
  upstreamClient,
} from "../../http";
import { eq, type ListPage, ne, type PatchOp, SCHEMA, ScimClient } from "../../scim";
import type { ValimailConfig } from "./config";
import { AUTH_PATH, scimBasePath, USER_EXTENSION, USERS } from "./constants";
import { authError, authResponse, type ScimUser, scimUser } from "./models";

export interface UsersQuery {
  startIndex: number;
  count: number;
  exclude?: string;
}

export interface NewUser {
  email: string;
  givenName: string;
  familyName: string;
  memberType: string;
}

/**
 * The Valimail Configuration API: a token from `/auth`, and SCIM users. The token and the rate
 * limiter are shared by every call; counters, logger and abort signal come with `ctx`.
 */
export class ValimailApi {
  readonly #config: ValimailConfig;
  readonly #http: HttpClient;
  readonly #tokens: TokenCache;
  readonly #scim: ScimClient;

  constructor(config: ValimailConfig, options: UpstreamOptions = {}) {
    this.#config = config;
    this.#tokens = new TokenCache((ctx) => this.#fetchToken(ctx));
    this.#http = upstreamClient(
      config,
      this.#tokens,
      "CONNECTOR_EMAILAUTH_RATE_LIMIT_WAIT_SECONDS",
      options,
    );
    this.#scim = new ScimClient(this.#http, scimBasePath(config.slug));
  }

  token(ctx: RequestContext): Promise<AccessToken> {
    return this.#tokens.token(ctx);
  }

  /**
   * One page of users from `startIndex`, at most `count`; with `exclude`, without the user of that
   * id (a paging probe). Each user is parsed on its own, so a bad one is named by its place.
   */
  async listUsers(query: UsersQuery, ctx: RequestContext) {
    const { startIndex, count, exclude } = query;
    const ahead =
      exclude === undefined ? ctx.prefetched?.take<ListPage>(pageKey(query)) : undefined;
    const page = await this.#guard(
      () =>
        ahead ??
        this.#scim.list(
          USERS,
          { startIndex, count, ...(exclude === undefined ? {} : { filter: ne("id", exclude) }) },
          ctx,
        ),
    );
    return {
      users: parseEach(
        scimUser,
        page.resources,
        (index) => `Valimail users, page at startIndex ${startIndex}, item ${index + 1}`,
      ),
      totalResults: page.totalResults,
    };
  }

  /**
   * Asks for pages of users ahead of the jobs that read them (`indexPagesAhead`), when the run
   * keeps answers for them (`RequestContext.prefetched`): `listUsers` of the same page takes the
   * answer instead of asking again.
   */
  askAhead(queries: ReadonlyArray<{ startIndex: number; count: number }>, ctx: RequestContext) {
    const { prefetched } = ctx;
    if (!prefetched) return;
    const behind = askingAhead(ctx);
    for (const query of queries) {
      prefetched.start(pageKey(query), () => this.#scim.list(USERS, query, behind));
    }
  }

  async getUser(id: string, ctx: RequestContext): Promise<ScimUser | undefined> {
    const body = await this.#guard(() => this.#scim.get(USERS, id, ctx));
    return body === undefined ? undefined : this.#parseUser(body, `Valimail user ${id}`);
  }

  /** The user whose `userName` is `email`, if any (docs/upstream.md: the lookup after a 409). */
  async findUserByUserName(email: string, ctx: RequestContext): Promise<ScimUser | undefined> {
    const filter = eq("userName", email);
    const page = await this.#guard(() => this.#scim.list(USERS, { filter }, ctx));
    const users = page.resources.map((r) => this.#parseUser(r, "Valimail user lookup"));
    return users.find((u) => u.userName.toLowerCase() === email.toLowerCase());
  }

  async createUser(user: NewUser, ctx: RequestContext): Promise<ScimUser> {
    const body = await this.#guard(() =>
      this.#scim.create(
        USERS,
        {
          schemas: [SCHEMA.user, USER_EXTENSION],
          userName: user.email,
          name: { givenName: user.givenName, familyName: user.familyName },
          [USER_EXTENSION]: { memberType: user.memberType },
        },
        ctx,
      ),
    );
    return this.#parseUser(body, "Valimail create");
  }

  async patchUser(id: string, body: PatchOp, ctx: RequestContext): Promise<ScimUser> {
    return this.#parseUser(
      await this.#guard(() => this.#scim.patch(USERS, id, body, ctx)),
      `Valimail PATCH ${id}`,
    );
  }

  #parseUser(body: unknown, what: string): ScimUser {
    return parseResponse(scimUser, { body }, what);
  }

  async #fetchToken(ctx: RequestContext): Promise<AccessToken> {
    ctx.counters.tokenRequests++;
    try {
      const response = await this.#http.request(
        {
          method: "POST",
          path: AUTH_PATH,
          authenticate: false,
          // Asking for a token again changes nothing upstream.
          idempotent: true,
          json: { "client-id": this.#config.clientId, "app-id": this.#config.appId },
        },
        ctx,
      );
      const token = parseResponse(authResponse, response, "Valimail /auth");
      return { value: token.token, expiresAt: token.expiresAt };
    } catch (error) {
      if (HttpStatusError.is(error) && [400, 401, 403, 422].includes(error.status)) {
        const parsed = authError.safeParse(error.body);
        const said =
          parsed.success && parsed.data.message ? `: ${printable(parsed.data.message)}` : "";
        throw new CredentialsRejectedError(
          `Valimail rejected the API key (/auth answered ${error.status}${said}). Check CONNECTOR_EMAILAUTH_CLIENT_ID and CONNECTOR_EMAILAUTH_APP_ID: both come from one Configuration Only key.`,
          { cause: error, field: "CONNECTOR_EMAILAUTH_CLIENT_ID" },
        );
      }
      throw error;
    }
  }

  /** A 401 that survived one token refresh, or a 403, means the key cannot act on this account. */
  async #guard<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (HttpStatusError.is(error) && (error.status === 401 || error.status === 403)) {
        const fix =
          error.status === 403
            ? `Check CONNECTOR_EMAILAUTH_SLUG ("${this.#config.slug}") and that the key belongs to that account`
            : "A fresh token was rejected too: check that the API key is still active";
        throw new CredentialsRejectedError(`${error.message}. ${fix}.`, {
          cause: error,
          field:
            error.status === 403 ? "CONNECTOR_EMAILAUTH_SLUG" : "CONNECTOR_EMAILAUTH_CLIENT_ID",
        });
      }
      throw error;
    }
  }
}

/** A page of users: the key of its answer asked for ahead. */
function pageKey(query: { startIndex: number; count: number }): string {
  return `Valimail users from ${query.startIndex}, ${query.count} of them`;
}
