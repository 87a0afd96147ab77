import type { z } from "zod";
import { CredentialsRejectedError } from "../../errors";
import {
  type AccessToken,
  type HttpClient,
  HttpStatusError,
  parseResponse,
  type RequestContext,
  TokenCache,
  type UpstreamOptions,
  upstreamClient,
} from "../../http";
import type { BlacklineConfig } from "./config";
import { INVALID_INSTANCE_GUID, PAGE_PARAM, PAGE_SIZE_PARAM, TOKEN_PATH } from "./constants";
import { listResponse, oauthError, tokenResponse } from "./models";

export interface ListPage<Item> {
  items: Item[];
  totalItems: number | undefined;
}

/**
 * The BlackLine REST API: a token by password grant, and one list page per call. The token and
 * the rate limiter are shared by every call; counters, logger and abort signal come with `ctx`.
 */
export class BlacklineApi {
  readonly #config: BlacklineConfig;
  readonly #http: HttpClient;
  readonly #tokens: TokenCache;

  constructor(config: BlacklineConfig, options: UpstreamOptions = {}) {
    this.#config = config;
    this.#tokens = new TokenCache((ctx) => this.fetchToken(ctx));
    this.#http = upstreamClient(config, this.#tokens, options);
  }

  /** The cached token, fetched when due (what `validate` checks first). */
  token(ctx: RequestContext): Promise<AccessToken> {
    return this.#tokens.token(ctx);
  }

  /** OAuth 2.0 resource-owner password grant (RFC 6749 section 4.3). */
  private async fetchToken(ctx: RequestContext): Promise<AccessToken> {
    ctx.counters.tokenRequests++;
    const requestedAt = Date.now();
    try {
      const response = await this.#http.request(
        {
          method: "POST",
          path: TOKEN_PATH,
          authenticate: false,
          // Asking for a token again changes nothing upstream.
          idempotent: true,
          form: {
            grant_type: "password",
            username: this.#config.username,
            password: this.#config.apiKey,
            scope: this.#config.scope,
            client_id: this.#config.clientId,
            client_secret: this.#config.clientSecret,
          },
        },
        ctx,
      );
      const token = parseResponse(tokenResponse, response, "BlackLine token endpoint");
      return { value: token.access_token, expiresAt: requestedAt + token.expires_in * 1000 };
    } catch (error) {
      throw tokenError(error);
    }
  }

  async listPage<Item extends z.ZodType>(
    path: string,
    item: Item,
    page: number,
    pageSize: number,
    ctx: RequestContext,
  ): Promise<ListPage<z.output<Item>>> {
    try {
      const response = await this.#http.request(
        {
          method: "GET",
          path,
          query: { [PAGE_PARAM]: page, [PAGE_SIZE_PARAM]: pageSize },
        },
        ctx,
      );
      const body = parseResponse(
        listResponse(item),
        response,
        `BlackLine GET ${path} page ${page}`,
      );
      return { items: body.items, totalItems: body.totalItems };
    } catch (error) {
      throw resourceError(error);
    }
  }
}

function tokenError(error: unknown): unknown {
  if (!HttpStatusError.is(error) || error.status >= 500 || error.status === 429) return error;
  const parsed = oauthError.safeParse(error.body);
  const code = parsed.success ? parsed.data.error : `HTTP ${error.status}`;
  const description = parsed.success ? parsed.data.error_description : undefined;
  const quoted = description ? `${code}: ${description}` : code;
  let fix: string;
  if (code === "invalid_grant" && description?.includes(INVALID_INSTANCE_GUID)) {
    fix =
      "Set CONNECTOR_ACCOUNTING_SCOPE to the API scope names plus exactly one instance_<GUID> token of your BlackLine instance";
  } else if (code === "invalid_grant") {
    fix =
      "Check CONNECTOR_ACCOUNTING_USERNAME and CONNECTOR_ACCOUNTING_API_KEY (the user's API key, not the web password)";
  } else if (code === "invalid_scope") {
    fix = "Check the API scope names in CONNECTOR_ACCOUNTING_SCOPE";
  } else {
    fix = "Check CONNECTOR_ACCOUNTING_CLIENT_ID and CONNECTOR_ACCOUNTING_CLIENT_SECRET";
  }
  return new CredentialsRejectedError(`BlackLine rejected the token request (${quoted}). ${fix}.`, {
    cause: error,
  });
}

function resourceError(error: unknown): unknown {
  if (!HttpStatusError.is(error) || (error.status !== 401 && error.status !== 403)) return error;
  const fix =
    error.status === 403
      ? "The API user lacks permission to read it: give the user of CONNECTOR_ACCOUNTING_USERNAME the administrator role, or a role that can read users, teams and roles"
      : "A fresh token was rejected too: check that the API client and user are still active";
  return new CredentialsRejectedError(`${error.message}. ${fix}.`, { cause: error });
}
