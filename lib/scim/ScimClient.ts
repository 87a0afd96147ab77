import * as z from "zod";
import { type HttpClient, HttpStatusError, parseResponse, type RequestContext } from "../http";
import { SCIM_MEDIA_TYPE } from "./constants";
import { ScimError } from "./errors";
import type { PatchOp } from "./patch";

/**
 * A list answer: its resources and total. `startIndex` and `itemsPerPage` are not read: paging
 * decides from the resources served (servers report the count asked in `itemsPerPage`).
 */
export const listResponse = z.object({
  totalResults: z.number().int().nonnegative().optional(),
  Resources: z.array(z.unknown()).optional(),
});

export interface ListPage {
  resources: unknown[];
  totalResults: number | undefined;
}

export interface ListQuery {
  filter?: string;
  startIndex?: number;
  count?: number;
}

/**
 * A generic SCIM 2.0 client over the project's HTTP layer: one list page per call, get, create and
 * PATCH, `application/scim+json` both ways, and error answers as typed `ScimError`s. Paths are
 * built by the caller from ids (never from `meta.location`), with each segment encoded.
 */
export class ScimClient {
  readonly #http: HttpClient;
  readonly #basePath: string;

  constructor(http: HttpClient, basePath: string) {
    this.#http = http;
    this.#basePath = basePath.replace(/\/+$/, "");
  }

  async list(resourceType: string, query: ListQuery, ctx: RequestContext): Promise<ListPage> {
    const response = await this.#call(
      {
        method: "GET",
        path: `/${resourceType}`,
        query: { filter: query.filter, startIndex: query.startIndex, count: query.count },
      },
      ctx,
    );
    const body = parseResponse(listResponse, response, `SCIM GET ${resourceType}`);
    return { resources: body.Resources ?? [], totalResults: body.totalResults };
  }

  /** One resource, or undefined when the server answers 404. */
  async get(resourceType: string, id: string, ctx: RequestContext): Promise<unknown> {
    try {
      return (await this.#call({ method: "GET", path: resourcePath(resourceType, id) }, ctx)).body;
    } catch (error) {
      if (ScimError.is(error) && error.status === 404) return undefined;
      throw error;
    }
  }

  /** POST: never repeated by the HTTP layer; the caller decides what to do after a failure. */
  async create(resourceType: string, resource: unknown, ctx: RequestContext): Promise<unknown> {
    const request = { method: "POST" as const, path: `/${resourceType}`, json: resource };
    return (await this.#call(request, ctx)).body;
  }

  /** PATCH with `replace` operations only, which are idempotent and so retried. */
  async patch(
    resourceType: string,
    id: string,
    body: PatchOp,
    ctx: RequestContext,
  ): Promise<unknown> {
    const response = await this.#call(
      { method: "PATCH", path: resourcePath(resourceType, id), json: body, idempotent: true },
      ctx,
    );
    return response.body;
  }

  async #call(
    request: {
      method: "GET" | "POST" | "PATCH";
      path: string;
      query?: Record<string, string | number | undefined>;
      json?: unknown;
      idempotent?: boolean;
    },
    ctx: RequestContext,
  ) {
    try {
      return await this.#http.request(
        {
          ...request,
          path: this.#basePath + request.path,
          headers: { accept: SCIM_MEDIA_TYPE },
          contentType: SCIM_MEDIA_TYPE,
        },
        ctx,
      );
    } catch (error) {
      throw HttpStatusError.is(error) ? new ScimError(error) : error;
    }
  }
}

function resourcePath(resourceType: string, id: string): string {
  return `/${resourceType}/${encodeURIComponent(id)}`;
}
