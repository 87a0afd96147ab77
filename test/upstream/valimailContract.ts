/**
 * The Valimail contract checker: Valimail's own OpenAPI description (the part the connector uses,
 * copied verbatim into `fixtures/valimail-openapi.yml`), and openapi-request-validator /
 * openapi-response-validator to hold every request and answer a recording proxy
 * (`test/helpers/recordingProxy.ts`) captured against the operation the document declares for it.
 *
 * openapi-backend was tried first and set aside: its body validation only looks at
 * `application/json`, so every SCIM body (`application/scim+json`) would pass unchecked. These two
 * pick the schema by the media type actually sent.
 */
import { readFileSync } from "node:fs";
import type { IncomingHttpHeaders } from "node:http";
import { fileURLToPath } from "node:url";
import { fullFormats } from "ajv-formats/dist/formats.js";
import OpenAPIRequestValidator from "openapi-request-validator";
import OpenAPIResponseValidator from "openapi-response-validator";
import { parse } from "yaml";
import type { Exchange } from "../helpers/recordingProxy";

export const DOCUMENT_PATH = fileURLToPath(
  new URL("./fixtures/valimail-openapi.yml", import.meta.url),
);

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document is free-form YAML
type Json = any;

/** One mismatch between an exchange and the document. */
export interface Finding {
  side: "request" | "response";
  /** `METHOD /path/template` from the document, or `unmatched`. */
  operation: string;
  status?: number;
  /** Where: `query.startIndex`, `header.authorization`, `body.Operations[0].value`, ... */
  location: string;
  /** The JSON Schema keyword or check that failed: `type`, `enum`, `security`, `content-type`. */
  keyword: string;
  message: string;
  /** The offending value where one can be read from the exchange. */
  value?: unknown;
}

interface Operation {
  id: string;
  method: string;
  template: string;
  pattern: RegExp;
  names: string[];
  op: Json;
  parameters: Json[];
  validators?: { request: OpenAPIRequestValidator; response: OpenAPIResponseValidator };
}

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];

/** ajv-formats' full formats, as the response validator's custom formats (it has none of its own). */
const CUSTOM_FORMATS = Object.fromEntries(
  Object.entries(fullFormats).flatMap(([name, format]) => {
    const test =
      typeof format === "function"
        ? format
        : format instanceof RegExp
          ? (v: string) => format.test(v)
          : typeof format === "object" && "validate" in format
            ? typeof format.validate === "function"
              ? format.validate
              : (v: string) => (format.validate as RegExp).test(v)
            : undefined;
    return test ? [[name, (v: unknown) => typeof v !== "string" || test(v as never)]] : [];
  }),
) as Record<string, (v: unknown) => boolean>;

export class ValimailContract {
  readonly document: Json;
  /** The path of the document's server URLs ("" for `https://api.valimail.com`). */
  readonly serverPath: string;
  private readonly operations: Operation[] = [];

  constructor(path = DOCUMENT_PATH) {
    this.document = parse(readFileSync(path, "utf8"));
    const serverPaths = new Set<string>(
      (this.document.servers ?? [{ url: "/" }]).map((s: { url: string }) =>
        new URL(s.url, "http://x").pathname.replace(/\/$/, ""),
      ),
    );
    if (serverPaths.size !== 1) throw new Error(`servers disagree on the base path`);
    this.serverPath = [...serverPaths][0] ?? "";
    for (const [template, item] of Object.entries<Json>(this.document.paths)) {
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        const names: string[] = [];
        const source = template
          .split(/(\{[^}]+\})/)
          .map((part) => {
            const name = /^\{(.+)\}$/.exec(part)?.[1];
            if (name === undefined) return part.replace(/[.*+?^$()|[\]\\]/g, "\\$&");
            names.push(name);
            return "([^/]+)";
          })
          .join("");
        const parameters = [...(item.parameters ?? []), ...(op.parameters ?? [])];
        this.operations.push({
          id: `${method.toUpperCase()} ${template}`,
          method: method.toUpperCase(),
          template,
          pattern: new RegExp(`^${this.serverPath}${source}$`),
          names,
          op,
          parameters,
        });
      }
    }
  }

  /** The mismatches of one exchange. `basePath` is the client's base URL path, mapped to the server's. */
  check(exchange: Exchange, basePath = ""): Finding[] {
    const url = new URL(exchange.url, "http://proxy");
    const relative = url.pathname.startsWith(basePath)
      ? url.pathname.slice(basePath.length)
      : url.pathname;
    const path = `${this.serverPath}${relative}`;
    const operation = this.operations.find(
      (o) => o.method === exchange.method && o.pattern.test(path),
    );
    if (!operation) {
      return [
        {
          side: "request",
          operation: "unmatched",
          location: "path",
          keyword: "operation",
          message: `${exchange.method} ${path} is no operation of the document`,
        },
      ];
    }
    return [
      ...this.checkRequest(operation, path, url, exchange),
      ...this.checkResponse(operation, exchange),
    ];
  }

  /** Compiled on first use: only the operations the exchanges reach. */
  private validators(o: Operation) {
    o.validators ??= {
      request: new OpenAPIRequestValidator({
        parameters: o.parameters,
        requestBody: o.op.requestBody,
        componentSchemas: this.document.components?.schemas,
      }),
      response: new OpenAPIResponseValidator({
        responses: o.op.responses,
        components: this.document.components,
        customFormats: CUSTOM_FORMATS,
      }),
    };
    return o.validators;
  }

  private checkRequest(o: Operation, path: string, url: URL, e: Exchange): Finding[] {
    const findings: Finding[] = [];
    const match = o.pattern.exec(path) ?? [];
    const params = Object.fromEntries(
      o.names.map((name, i) => [name, decodeURIComponent(match[i + 1] ?? "")]),
    );
    const query: Record<string, string | string[]> = {};
    for (const [key, value] of url.searchParams) {
      const seen = query[key];
      query[key] = seen === undefined ? value : [...[seen].flat(), value];
    }
    const contentType = e.requestHeaders["content-type"];
    let body: unknown;
    if (e.requestBody !== "") {
      try {
        body = JSON.parse(e.requestBody);
      } catch {
        body = e.requestBody;
      }
    }
    const result = this.validators(o).request.validateRequest({
      method: e.method,
      path,
      params,
      query,
      headers: e.requestHeaders,
      body,
    } as never);
    for (const error of result?.errors ?? []) {
      const segments = splitPath(error.path, ".");
      const root =
        error.location === "body" ? body : error.location === "query" ? query : undefined;
      findings.push({
        side: "request",
        operation: o.id,
        location: render(error.location ?? "request", segments),
        keyword: keywordOf(error.errorCode),
        message: error.message,
        value: readPath(root, segments),
      });
    }
    const declaredQuery = new Set(
      o.parameters.filter((p) => p.in === "query").map((p) => p.name as string),
    );
    for (const name of Object.keys(query).filter((n) => !declaredQuery.has(n))) {
      findings.push({
        side: "request",
        operation: o.id,
        location: `query.${name}`,
        keyword: "undeclared",
        message: `query parameter ${name} is not declared on the operation`,
        value: query[name],
      });
    }
    if (o.op.requestBody && e.requestBody !== "") {
      const declared = Object.keys(o.op.requestBody.content ?? {});
      if (!declared.includes(mediaType(contentType))) {
        findings.push({
          side: "request",
          operation: o.id,
          location: "header.content-type",
          keyword: "content-type",
          message: `sent ${contentType}, the document declares ${declared.join(", ")}`,
        });
      }
    }
    findings.push(...this.checkSecurity(o, e.requestHeaders));
    return findings;
  }

  /** The document's security requirement (the operation's, else the global one), as sent. */
  private checkSecurity(o: Operation, headers: IncomingHttpHeaders): Finding[] {
    const requirements: Array<Record<string, string[]>> =
      o.op.security ?? this.document.security ?? [];
    if (requirements.length === 0) return [];
    const schemes = this.document.components?.securitySchemes ?? {};
    const met = requirements.some((requirement) =>
      Object.keys(requirement).every((name) => {
        const scheme = schemes[name];
        if (scheme?.type === "http" && scheme.scheme?.toLowerCase() === "bearer") {
          return /^Bearer \S+$/i.test(String(headers.authorization ?? ""));
        }
        throw new Error(`security scheme ${name} is not checked here`);
      }),
    );
    if (met) return [];
    return [
      {
        side: "request",
        operation: o.id,
        location: "header.authorization",
        keyword: "security",
        message: `no credentials for ${requirements.map((r) => Object.keys(r).join("+")).join(" or ")}`,
      },
    ];
  }

  private checkResponse(o: Operation, e: Exchange): Finding[] {
    const findings: Finding[] = [];
    let body: unknown;
    try {
      body = e.responseBody === "" ? undefined : JSON.parse(e.responseBody);
    } catch {
      body = e.responseBody;
    }
    const result = this.validators(o).response.validateResponse(e.status, body);
    for (const error of result?.errors ?? []) {
      const segments = splitPath(error.path, "/");
      findings.push({
        side: "response",
        operation: o.id,
        status: e.status,
        location: render("body", segments),
        keyword: keywordOf(error.errorCode),
        message: error.message,
        value: readPath(body, segments),
      });
    }
    const declared = Object.keys(o.op.responses?.[String(e.status)]?.content ?? {});
    const sent = mediaType(e.responseHeaders["content-type"]);
    if (declared.length > 0 && e.responseBody !== "" && !declared.includes(sent)) {
      findings.push({
        side: "response",
        operation: o.id,
        status: e.status,
        location: "header.content-type",
        keyword: "content-type",
        message: `answered ${sent}, the document declares ${declared.join(", ")}`,
      });
    }
    return findings;
  }
}

function mediaType(header: string | string[] | undefined): string {
  return String(header ?? "")
    .split(";")[0]
    ?.trim()
    .toLowerCase() as string;
}

/** `type.openapi.requestValidation` -> `type`; an unknown status code reads `status`. */
function keywordOf(errorCode: string | undefined): string {
  if (!errorCode) return "status";
  return errorCode.split(".")[0] ?? errorCode;
}

const EXTENSION = "urn:ietf:params:scim:schemas:extension:valimailuserextension:2.0:User";

/**
 * The request validator reports `Operations.0.value`, the response validator
 * `Resources/3/urn:...:2.0:User/memberType`: both become segments (the extension's name, which
 * has dots of its own, kept whole).
 */
function splitPath(path: string | undefined, separator: "." | "/"): string[] {
  if (!path) return [];
  if (separator === "/") {
    return path
      .replace(/^\//, "")
      .split("/")
      .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));
  }
  return path
    .replace(EXTENSION, "\u0000")
    .split(/\.|\[(\d+)\]/)
    .filter((s): s is string => s !== undefined && s !== "")
    .map((s) => (s === "\u0000" ? EXTENSION : s));
}

/** `body` + [Resources, 3, memberType] -> `body.Resources[3].memberType`. */
function render(root: string, segments: string[]): string {
  return segments.reduce((at, s) => (/^\d+$/.test(s) ? `${at}[${s}]` : `${at}.${s}`), root);
}

function readPath(root: unknown, segments: string[]): unknown {
  let value: unknown = root;
  for (const segment of segments) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}
