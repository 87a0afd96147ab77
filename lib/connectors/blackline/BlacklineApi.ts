import type * as z from "zod";
import { CredentialsRejectedError } from "../../errors";
import {
  type AccessToken,
  askingAhead,
  type HttpClient,
  type HttpResponse,
  HttpStatusError,
  parseEach,
  parseResponse,
  printable,
  type RequestContext,
  readJsonAnswer,
  TokenCache,
  UnexpectedResponseError,
  type UpstreamOptions,
  upstreamClient,
} from "../../http";
import { registerSecret } from "../../redact";
import { idOf, type SnapshotRecord } from "../../snapshot";
import type { RecordSink } from "../../sync";
import type { BlacklineConfig } from "./config";
import {
  type ClientAuthMethod,
  DEFAULT_TOKEN_LIFETIME_SECONDS,
  INVALID_INSTANCE_GUID,
  PAGE_PARAM,
  PAGE_SIZE_PARAM,
  TOKEN_PATH,
  TOKEN_TYPE,
} from "./constants";
import { type IdPage, readIdPage } from "./idPage";
import { idOnly, listResponse, oauthError, tokenResponse } from "./models";
import { ListBody, type RecordsPage, readRecordsPage } from "./recordsPage";

export interface ListPage<Item> {
  items: Item[];
  totalItems: number | undefined;
}

/** A list endpoint and the name its errors give it (`BlackLine teams`, `BlackLine members of team 7`). */
export interface ListEndpoint {
  path: string;
  name: string;
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
    this.#http = upstreamClient(
      config,
      this.#tokens,
      "CONNECTOR_ACCOUNTING_RATE_LIMIT_WAIT_SECONDS",
      options,
    );
  }

  /** The cached token, fetched when due (what `validate` checks first). */
  token(ctx: RequestContext): Promise<AccessToken> {
    return this.#tokens.token(ctx);
  }

  /**
   * OAuth 2.0 resource-owner password grant (RFC 6749 section 4.3), the client authenticated by
   * form body or HTTP Basic (section 2.3.1) as CONNECTOR_ACCOUNTING_CLIENT_AUTH says.
   */
  private async fetchToken(ctx: RequestContext): Promise<AccessToken> {
    ctx.counters.tokenRequests++;
    const requestedAt = Date.now();
    const { clientAuth, clientId, clientSecret } = this.#config;
    let response: HttpResponse;
    try {
      response = await this.#http.request(
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
            ...(clientAuth === "body" ? { client_id: clientId, client_secret: clientSecret } : {}),
          },
          ...(clientAuth === "basic"
            ? { headers: { authorization: basicAuthorization(clientId, clientSecret) } }
            : {}),
        },
        ctx,
      );
    } catch (error) {
      throw tokenError(error, clientAuth);
    }
    const token = parseResponse(tokenResponse, response, "BlackLine token endpoint");
    const type = token.token_type ?? TOKEN_TYPE;
    // RFC 6749 section 7.1: a client must not use a token whose type it does not understand.
    if (type.toLowerCase() !== TOKEN_TYPE) {
      throw new UnexpectedResponseError(
        `BlackLine token endpoint: token_type is "${type}", and this connector can use only Bearer tokens (RFC 6750); ask BlackLine for a Bearer token`,
      );
    }
    const lifetimeSeconds = token.expires_in ?? DEFAULT_TOKEN_LIFETIME_SECONDS;
    return { value: token.access_token, expiresAt: requestedAt + lifetimeSeconds * 1000 };
  }

  /**
   * One page of a list. Each item is parsed on its own, so a bad one is named by its list, page
   * and place (`BlackLine teams, page 3, item 18`).
   */
  async listPage<Item extends z.ZodType>(
    list: ListEndpoint,
    item: Item,
    query: { page: number; pageSize: number },
    ctx: RequestContext,
  ): Promise<ListPage<z.output<Item>>> {
    const response = await this.#get(list, query, ctx);
    return this.#parsePage(list, item, query, response);
  }

  /**
   * One page of a list as the sync uses it: its items' ids, their records (`toRecords` of each,
   * in order; with `sink`, some handed to it as the page is read) and `totalItems`. A page that
   * `PagedItems` reads is mapped item by item as its body is parsed; any other is parsed as
   * `listPage` parses it. Either way, a page with an item that does not fit fails as `listPage`
   * fails.
   */
  async listRecords<Item extends z.ZodType<{ id: string }>>(
    list: ListEndpoint,
    item: Item,
    toRecords: (item: z.output<Item>) => SnapshotRecord[],
    query: { page: number; pageSize: number },
    ctx: RequestContext,
    sink?: RecordSink,
  ): Promise<RecordsPage> {
    const ahead = ctx.prefetched?.take<HttpResponse>(recordsKey(list, query));
    const response = await this.#get(list, query, ctx, keepListBody, ahead);
    const bytes = response.body instanceof ListBody ? response.body.bytes : undefined;
    const read = bytes && readRecordsPage(bytes, item, toRecords, pageNames(list, query), sink);
    if (read) return read;
    const body = bytes ? readJsonAnswer(bytes, response) : response.body;
    const page = this.#parsePage(list, item, query, { ...response, body });
    return {
      ids: page.items.map(idOf),
      records: page.items.flatMap(toRecords),
      totalItems: page.totalItems,
    };
  }

  /**
   * Asks for pages of a list ahead of the jobs that read them (`pagesAhead`), when the run keeps
   * answers for them (`RequestContext.prefetched`): `listRecords` of the same page takes the
   * answer instead of asking again.
   */
  askAhead(
    list: ListEndpoint,
    queries: ReadonlyArray<{ page: number; pageSize: number }>,
    ctx: RequestContext,
  ): void {
    const { prefetched } = ctx;
    if (!prefetched) return;
    const behind = askingAhead(ctx);
    for (const query of queries) {
      prefetched.start(recordsKey(list, query), () =>
        this.#request(list, query, behind, keepListBody),
      );
    }
  }

  /**
   * One page of a list read for its ids only, as `listPage(list, idOnly, ...)` reads it: a page
   * that `readIdPage` reads is taken from its bytes without building its items (a team's members
   * come as full user records); any other is parsed by `listPage`'s schemas and fails as it fails.
   */
  async listIds(
    list: ListEndpoint,
    query: { page: number; pageSize: number },
    ctx: RequestContext,
  ): Promise<IdPage> {
    const response = await this.#get(list, query, ctx, readIdPageBody);
    if (response.body instanceof IdPageBody) return response.body.page;
    const page = this.#parsePage(list, idOnly, query, response);
    return { ids: page.items.map((item) => item.id), totalItems: page.totalItems };
  }

  async #get(
    list: ListEndpoint,
    query: { page: number; pageSize: number },
    ctx: RequestContext,
    readJson?: (bytes: Buffer) => unknown,
    /** The answer asked for ahead, when there is one (`askAhead`). */
    ahead?: Promise<HttpResponse>,
  ): Promise<HttpResponse> {
    try {
      return await (ahead ?? this.#request(list, query, ctx, readJson));
    } catch (error) {
      throw resourceError(error);
    }
  }

  #request(
    list: ListEndpoint,
    query: { page: number; pageSize: number },
    ctx: RequestContext,
    readJson?: (bytes: Buffer) => unknown,
  ): Promise<HttpResponse> {
    return this.#http.request(
      {
        method: "GET",
        path: list.path,
        query: { [PAGE_PARAM]: query.page, [PAGE_SIZE_PARAM]: query.pageSize },
        ...(readJson ? { readJson } : {}),
      },
      ctx,
    );
  }

  #parsePage<Item extends z.ZodType>(
    list: ListEndpoint,
    item: Item,
    query: { page: number },
    response: HttpResponse,
  ): ListPage<z.output<Item>> {
    const { where, what } = pageNames(list, query);
    const body = parseResponse(listResponse, response, what);
    return {
      items: parseEach(item, body.items, (index) => `${where}, item ${index + 1}`),
      totalItems: body.totalItems,
    };
  }
}

/** A page of a list as `listRecords` reads it: the key of its answer asked for ahead. */
function recordsKey(list: ListEndpoint, query: { page: number; pageSize: number }): string {
  return `BlackLine records of ${list.path}?page=${query.page}&pageSize=${query.pageSize}`;
}

/**
 * RFC 6749 section 2.3.1: the client id and secret are each form-urlencoded, joined by a colon,
 * and base64-encoded as the user and password of HTTP Basic (RFC 7617).
 */
export function basicAuthorization(clientId: string, clientSecret: string): string {
  const pair = `${formEncode(clientId)}:${formEncode(clientSecret)}`;
  const credentials = Buffer.from(pair, "utf8").toString("base64");
  // The secret in this form is not in the registry yet: a header echoed back must not show it.
  registerSecret(credentials);
  return `Basic ${credentials}`;
}

/** application/x-www-form-urlencoded, as a form body encodes a value (a space is `+`). */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice("v=".length);
}

function tokenError(error: unknown, clientAuth: ClientAuthMethod): unknown {
  if (!HttpStatusError.is(error) || error.status >= 500 || error.status === 429) return error;
  const parsed = oauthError.safeParse(error.body);
  const code = parsed.success ? parsed.data.error : `HTTP ${error.status}`;
  const description = parsed.success ? parsed.data.error_description : undefined;
  // Upstream text: redacted, control characters escaped, cut short.
  const quoted = printable(description ? `${code}: ${description}` : code);
  let fix: string;
  // The setting named first in the fix: where a settings page points.
  let field = "CONNECTOR_ACCOUNTING_CLIENT_SECRET";
  if (code === "invalid_grant" && description?.includes(INVALID_INSTANCE_GUID)) {
    field = "CONNECTOR_ACCOUNTING_SCOPE";
    fix =
      "Set CONNECTOR_ACCOUNTING_SCOPE to the API scope names plus exactly one instance_<GUID> token of your BlackLine instance";
  } else if (code === "invalid_grant") {
    field = "CONNECTOR_ACCOUNTING_API_KEY";
    fix =
      "Check CONNECTOR_ACCOUNTING_USERNAME and CONNECTOR_ACCOUNTING_API_KEY (the user's API key, not the web password)";
  } else if (code === "invalid_scope") {
    field = "CONNECTOR_ACCOUNTING_SCOPE";
    fix = "Check the API scope names in CONNECTOR_ACCOUNTING_SCOPE";
  } else if (code === "invalid_client") {
    if (clientAuth === "body" && error.status === 401) field = "CONNECTOR_ACCOUNTING_CLIENT_AUTH";
    fix = invalidClientFix(clientAuth, error.status);
  } else {
    fix = "Check CONNECTOR_ACCOUNTING_CLIENT_ID and CONNECTOR_ACCOUNTING_CLIENT_SECRET";
  }
  return new CredentialsRejectedError(`BlackLine rejected the token request (${quoted}). ${fix}.`, {
    cause: error,
    field,
  });
}

/**
 * What to check after `invalid_client`. A 401 to credentials sent in the body is the server
 * asking for HTTP Basic (RFC 6749 section 5.2); otherwise the pair or the method may be wrong.
 */
function invalidClientFix(clientAuth: ClientAuthMethod, status: number): string {
  const other: ClientAuthMethod = clientAuth === "body" ? "basic" : "body";
  const sent =
    clientAuth === "body"
      ? "client_id and client_secret went in the form body"
      : "client_id and client_secret went as HTTP Basic";
  if (clientAuth === "body" && status === 401) {
    return `CONNECTOR_ACCOUNTING_CLIENT_AUTH is body (${sent}), and the server's 401 asks for HTTP Basic: set CONNECTOR_ACCOUNTING_CLIENT_AUTH=basic; if it still fails, check CONNECTOR_ACCOUNTING_CLIENT_ID and CONNECTOR_ACCOUNTING_CLIENT_SECRET`;
  }
  return `Check CONNECTOR_ACCOUNTING_CLIENT_ID and CONNECTOR_ACCOUNTING_CLIENT_SECRET, and CONNECTOR_ACCOUNTING_CLIENT_AUTH (${clientAuth}: ${sent}; a server that takes the pair only the other way answers invalid_client too, so if the pair is right, set CONNECTOR_ACCOUNTING_CLIENT_AUTH=${other})`;
}

function resourceError(error: unknown): unknown {
  if (!HttpStatusError.is(error) || (error.status !== 401 && error.status !== 403)) return error;
  const fix =
    error.status === 403
      ? "The API user lacks permission to read it: give the user of CONNECTOR_ACCOUNTING_USERNAME the administrator role, or a role that can read users, teams and roles"
      : "A fresh token was rejected too: check that the API client and user are still active";
  return new CredentialsRejectedError(`${error.message}. ${fix}.`, {
    cause: error,
    field: "CONNECTOR_ACCOUNTING_USERNAME",
  });
}

/**
 * How a page's errors name it: `where` (`BlackLine teams, page 3`), before an item's place, and
 * `what`, for the page's body, with its request.
 */
function pageNames(list: ListEndpoint, query: { page: number }): { where: string; what: string } {
  const where = `${list.name}, page ${query.page}`;
  return { where, what: `${where} (GET ${list.path})` };
}

/** A list page's bytes, read once the request is done (`listRecords`). */
function keepListBody(bytes: Buffer): ListBody {
  return new ListBody(bytes);
}

/** A page read by `readIdPage`: a class of its own, which no parsed JSON body is. */
class IdPageBody {
  constructor(readonly page: IdPage) {}
}

/** A JSON answer's body as a plain id page when it is one; undefined leaves it to be parsed. */
function readIdPageBody(bytes: Buffer): IdPageBody | undefined {
  const page = readIdPage(bytes);
  return page && new IdPageBody(page);
}
