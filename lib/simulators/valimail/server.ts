import { randomBytes } from "node:crypto";
import { faultyPage } from "../faultSchedule";
import type { FaultSettings } from "../faults";
import { type SimRequest, type SimResponse, startSimServer } from "../httpServer";
import { asciiSlug, FAMILY_NAMES, GIVEN_NAMES, SeededRandom } from "../random";
import { SimTokens, type TokenSettings } from "../tokens";
import { FilterSyntaxError, parseFilter } from "./filter";
import { type ScimPagingQuirks, scimListFields, scimWindow } from "./pagingQuirks";

const CORE_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
const EXTENSION = "urn:ietf:params:scim:schemas:extension:valimailuserextension:2.0:User";
const PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const MEMBER_TYPE_PATHS = new Set(
  [`${EXTENSION}.memberType`, `${EXTENSION}:memberType`].map((p) => p.toLowerCase()),
);

export interface ValimailSimUser {
  id: string;
  userName: string;
  givenName: string;
  familyName: string;
  active: boolean;
  memberType: string;
  created: string;
  lastModified: string;
}

/** Paging quirks (`ScimPagingQuirks`) sit beside the other settings; lib/simulators/README.md lists them. */
export interface ValimailSimulatorOptions extends TokenSettings, ScimPagingQuirks {
  seed?: number;
  users?: number;
  slug?: string;
  /** Whether the account offers the `marketer` member type. */
  marketer?: boolean;
  credentials?: { clientId?: string; appId?: string };
  /** Spell the token expiry `expires_at` instead of `expires-at`. */
  expiresField?: "expires-at" | "expires_at";
  /**
   * How writes are answered. `fresh` (default): the change is applied and the answer shows it.
   * `stale`: the change is applied, but the answer shows the user as it was before the PATCH (a
   * POST's answer leaves out the member type extension). `ignored`: nothing is applied, and the
   * answer looks like `stale` (a POST's answer carries an id that no user has).
   */
  writeAnswers?: "fresh" | "stale" | "ignored";
  faults?: FaultSettings;
}

export interface ValimailSimulator {
  url: string;
  slug: string;
  credentials: { clientId: string; appId: string };
  /** The account's users, live: tests read back what actions changed. */
  users: Map<string, ValimailSimUser>;
  readonly stats: {
    requests: number;
    /** Answered 429 by the enforced `limit` or `quota`. */
    throttled: number;
    /** Requests `faults.schedule` hit, and pages or data `faults.pages` or `faults.change` changed. */
    faulted: number;
    byRoute: Record<string, number>;
    writes: number;
  };
  /** Every PATCH and POST body received on the SCIM paths, in order. */
  writeLog: Array<{ method: string; path: string; body: unknown }>;
  issuedTokens(): string[];
  faults: FaultSettings;
  /** The CONNECTOR_EMAILAUTH_* variables that point the connector at this simulator. */
  env(): Record<string, string>;
  close(): Promise<void>;
}

/** A Valimail Configuration API on loopback, following its OpenAPI description: /auth and SCIM users. */
export async function startValimailSimulator(
  options: ValimailSimulatorOptions = {},
): Promise<ValimailSimulator> {
  const random = new SeededRandom(options.seed ?? 1);
  const slug = options.slug ?? "acme";
  const marketer = options.marketer ?? true;
  const credentials = {
    clientId: options.credentials?.clientId ?? "34acfc47-e910-4dcc-bb22-e2816f7e1e4c",
    appId: options.credentials?.appId ?? "358e2665-dfb9-4a9f-b8db-c0404b7bf087",
  };
  const users = new Map<string, ValimailSimUser>();
  const newId = () => Array.from({ length: 10 }, () => random.int(16).toString(16)).join("");
  for (let i = 0; i < (options.users ?? 200); i++) {
    const givenName = random.pick(GIVEN_NAMES);
    const familyName = random.pick(FAMILY_NAMES);
    const roll = random.next();
    const memberType = roll < 0.08 ? "owner" : marketer && roll < 0.25 ? "marketer" : "member";
    const stamp = new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString();
    const user: ValimailSimUser = {
      id: newId(),
      userName: `${asciiSlug(givenName)}.${asciiSlug(familyName)}.${i}@example.com`,
      givenName,
      familyName,
      active: !random.chance(0.08),
      memberType,
      created: stamp,
      lastModified: stamp,
    };
    users.set(user.id, user);
  }

  const tokens = new SimTokens<true>(options);
  const byRoute: Record<string, number> = {};
  const writeLog: ValimailSimulator["writeLog"] = [];
  const count = (route: string) => {
    byRoute[route] = (byRoute[route] ?? 0) + 1;
  };
  const allowedTypes = new Set(marketer ? ["owner", "member", "marketer"] : ["owner", "member"]);

  const handler = (request: SimRequest): SimResponse => {
    const path = request.url.pathname;
    if (path === "/auth") {
      count("auth");
      return request.method === "POST" ? auth(request) : scimError(405, "Method not allowed");
    }
    const scim = /^\/accounts\/([^/]+)\/scim\/v2\/Users(?:\/([^/]+))?$/.exec(path);
    if (!scim) return scimError(404, "Not found");
    const denied = checkBearer(request);
    if (denied) return denied;
    if (decodeURIComponent(scim[1] ?? "") !== slug)
      return scimError(403, "Not authorized to access this account");
    const id = scim[2] === undefined ? undefined : decodeURIComponent(scim[2]);

    if (id === undefined && request.method === "GET") {
      count("list");
      return list(request);
    }
    if (id === undefined && request.method === "POST") {
      count("create");
      return create(request);
    }
    if (id !== undefined && request.method === "GET") {
      count("get");
      const user = users.get(id);
      return user ? scimOk(200, toScim(user)) : scimError(404, `User with ID ${id} not found`);
    }
    if (id !== undefined && request.method === "PATCH") {
      count("patch");
      return patch(request, id);
    }
    // PUT and DELETE are not offered.
    return scimError(405, `${request.method} is not supported`);
  };

  function auth(request: SimRequest): SimResponse {
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(request.body) as Record<string, unknown>;
    } catch {
      return odinError(400, "request body is not JSON");
    }
    if (body["client-id"] !== credentials.clientId || body["app-id"] !== credentials.appId) {
      return odinError(400, "invalid client-id or app-id");
    }
    const { token, expiresAt } = tokens.issue(true);
    const iso = new Date(expiresAt).toISOString().replace("Z", "123456Z");
    return { status: 200, body: { token, [options.expiresField ?? "expires-at"]: iso } };
  }

  function checkBearer(request: SimRequest): SimResponse | undefined {
    if (tokens.check(request.headers.authorization)) return undefined;
    return {
      ...scimError(401, "Unauthorized"),
      body: { ...scimErrorBody(401, "Unauthorized"), scimType: "unauthorized" },
    };
  }

  function list(request: SimRequest): SimResponse {
    let matching = [...users.values()];
    const filter = request.url.searchParams.get("filter");
    if (filter) {
      try {
        const test = parseFilter(filter);
        matching = matching.filter((user) =>
          test((attribute) => resolveAttribute(user, attribute)),
        );
      } catch (error) {
        if (!(error instanceof FilterSyntaxError)) throw error;
        return {
          ...scimError(400, `The specified filter syntax was invalid: ${error.message}`),
          body: {
            ...scimErrorBody(400, `The specified filter syntax was invalid: ${error.message}`),
            scimType: "invalidFilter",
          },
        };
      }
    }
    const query = request.url.searchParams;
    const { offset, size } = scimWindow(options, query, matching.length);
    const page = faultyPage(matching, offset, size, simulator.faults.pages, server.countFault);
    const answer = scimOk(200, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
      ...scimListFields(options, query, page.length, matching.length),
      Resources: page.map(toScim),
    });
    if (!filter) changeUsers(page);
    return answer;
  }

  let changed = false;
  /** The `change` fault: once the first page of users (more than one) has been read. */
  function changeUsers(served: readonly ValimailSimUser[]): void {
    const change = simulator.faults.change;
    if (!change || changed || served.length < 2) return;
    changed = true;
    server.countFault();
    const removed = served[0] as ValimailSimUser;
    if (change === "remove_user") {
      users.delete(removed.id);
      return;
    }
    const before = [...users.values()];
    const id = newId();
    users.clear();
    users.set(id, { ...removed, id, userName: `added.${id}@example.com` });
    for (const user of before) users.set(user.id, user);
  }

  function create(request: SimRequest): SimResponse {
    const body = parseJson(request.body);
    writeLog.push({ method: "POST", path: request.url.pathname, body });
    const schemas = Array.isArray(body?.schemas) ? body.schemas : [];
    const userName = body?.userName;
    const name = (body?.name ?? {}) as { givenName?: unknown; familyName?: unknown };
    const memberType =
      (body?.[EXTENSION] as { memberType?: unknown } | undefined)?.memberType ?? "member";
    if (
      !schemas.includes(CORE_SCHEMA) ||
      typeof userName !== "string" ||
      !/^[^@\s]+@[^@\s]+$/.test(userName)
    ) {
      return invalidValue("Request is unparsable, syntactically incorrect, or violates schema");
    }
    if (typeof memberType !== "string" || !allowedTypes.has(memberType))
      return invalidValue(`Invalid memberType ${String(memberType)}`);
    if ([...users.values()].some((u) => u.userName.toLowerCase() === userName.toLowerCase())) {
      return scimError(409, `User with email ${userName} already exists`);
    }
    const now = new Date().toISOString();
    const writeAnswers = options.writeAnswers ?? "fresh";
    const user: ValimailSimUser = {
      id: newId(),
      userName,
      givenName: typeof name.givenName === "string" ? name.givenName : "",
      familyName: typeof name.familyName === "string" ? name.familyName : "",
      active: true,
      memberType,
      created: now,
      lastModified: now,
    };
    if (writeAnswers === "fresh") {
      users.set(user.id, user);
      return scimOk(201, toScim(user));
    }
    if (writeAnswers === "stale") users.set(user.id, user);
    const { [EXTENSION]: _memberType, ...withoutMemberType } = toScim(user);
    return scimOk(201, withoutMemberType);
  }

  function patch(request: SimRequest, id: string): SimResponse {
    const body = parseJson(request.body);
    writeLog.push({ method: "PATCH", path: request.url.pathname, body });
    const user = users.get(id);
    if (!user) return scimError(404, `User with ID ${id} not found`);
    const operations = body?.Operations;
    if (
      !Array.isArray(body?.schemas) ||
      !body.schemas.includes(PATCH_SCHEMA) ||
      !Array.isArray(operations)
    ) {
      return invalidValue("Invalid PATCH operation: missing PatchOp schema or Operations");
    }
    const changes: Partial<ValimailSimUser> = {};
    for (const operation of operations as Array<{
      op?: unknown;
      path?: unknown;
      value?: unknown;
    }>) {
      const path = typeof operation.path === "string" ? operation.path.toLowerCase() : "";
      if (operation.op !== "replace")
        return invalidValue("Invalid PATCH operation: Unsupported operation type");
      if (path === "active" && typeof operation.value === "boolean")
        changes.active = operation.value;
      else if (
        MEMBER_TYPE_PATHS.has(path) &&
        typeof operation.value === "string" &&
        allowedTypes.has(operation.value)
      ) {
        changes.memberType = operation.value;
      } else return invalidValue("Invalid PATCH operation: Unsupported operation type");
    }
    const before = toScim(user);
    const writeAnswers = options.writeAnswers ?? "fresh";
    if (writeAnswers !== "ignored")
      Object.assign(user, changes, { lastModified: new Date().toISOString() });
    return scimOk(200, writeAnswers === "fresh" ? toScim(user) : before);
  }

  function toScim(user: ValimailSimUser) {
    return {
      schemas: [CORE_SCHEMA, EXTENSION],
      id: user.id,
      userName: user.userName,
      name: { givenName: user.givenName, familyName: user.familyName },
      active: user.active,
      [EXTENSION]: { memberType: user.memberType },
      // As the real API does: a location that is not the path to call.
      meta: {
        resourceType: "User",
        created: user.created,
        lastModified: user.lastModified,
        location: `https://api.valimail.com/account/${slug}/scim/v2/users/${user.id}`,
      },
    };
  }

  const server = await startSimServer(handler, () => simulator.faults);
  const simulator: ValimailSimulator = {
    url: server.url,
    slug,
    credentials,
    users,
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
      get writes() {
        return (byRoute.create ?? 0) + (byRoute.patch ?? 0);
      },
    },
    writeLog,
    issuedTokens: () => tokens.issued(),
    faults: options.faults ?? {},
    env: () => ({
      CONNECTOR_EMAILAUTH_BASE_URL: server.url,
      CONNECTOR_EMAILAUTH_CLIENT_ID: credentials.clientId,
      CONNECTOR_EMAILAUTH_APP_ID: credentials.appId,
      CONNECTOR_EMAILAUTH_SLUG: slug,
    }),
    close: () => server.close(),
  };
  return simulator;

  function resolveAttribute(
    user: ValimailSimUser,
    attribute: string,
  ): string | boolean | undefined {
    const key = attribute.toLowerCase();
    if (MEMBER_TYPE_PATHS.has(key)) return user.memberType;
    const values: Record<string, string | boolean> = {
      id: user.id,
      username: user.userName,
      active: user.active,
      "name.givenname": user.givenName,
      "name.familyname": user.familyName,
      "meta.created": user.created,
      "meta.lastmodified": user.lastModified,
    };
    return values[key];
  }
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

const SCIM_CONTENT_TYPE = "application/scim+json";

function scimOk(status: number, body: unknown): SimResponse {
  return { status, body, contentType: SCIM_CONTENT_TYPE };
}

function scimErrorBody(status: number, detail: string) {
  return {
    schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
    status: String(status),
    detail,
  };
}

function scimError(status: number, detail: string): SimResponse {
  return { status, body: scimErrorBody(status, detail), contentType: SCIM_CONTENT_TYPE };
}

function invalidValue(detail: string): SimResponse {
  return {
    status: 400,
    body: { ...scimErrorBody(400, detail), scimType: "invalidValue" },
    contentType: SCIM_CONTENT_TYPE,
  };
}

/** The non-SCIM error body of `/auth` (DefaultOdinErrorResponse). */
function odinError(status: number, message: string): SimResponse {
  return {
    status,
    body: {
      request: "/auth",
      message,
      type: "",
      "request-id": randomBytes(16).toString("hex"),
      call: "api",
      status: String(status),
    },
  };
}
