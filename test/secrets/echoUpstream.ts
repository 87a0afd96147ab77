import type { Answer, ReceivedRequest } from "../property/recordingServer";

/**
 * A hostile upstream's answers: it rejects or fails, and echoes back what it received (the values
 * decoded from a form or JSON body, the Authorization header, the raw body). The echoed item
 * number `item` is placed where the project cuts quoted upstream text (200 characters), twelve
 * characters before the cut, so a secret cut short would show its start.
 */
export type EchoMode = "token_401" | "token_500" | "resource_401" | "resource_500";

export const ECHO_TOKEN = "echo-issued-token-Zq8+/=w";
/** How many items an echo has at most: form or JSON values, the header, the raw body. */
export const ECHO_ITEMS = 8;

const QUOTE_LIMIT = 200;

function itemsOf(request: ReceivedRequest): string[] {
  const items = [...new URLSearchParams(request.body).values()];
  try {
    const json = JSON.parse(request.body) as Record<string, unknown>;
    items.push(...Object.values(json).map(String));
  } catch {}
  items.push(request.headers.authorization ?? "", request.body);
  return items.filter((item) => item.length > 0);
}

function echoOf(request: ReceivedRequest, item: number, prefix: number): string {
  const items = itemsOf(request);
  const placed = items[item % items.length] ?? "";
  const pad = "x".repeat(Math.max(0, QUOTE_LIMIT - prefix - 12));
  return `${pad}${placed} | ${items.join(" | ")}`;
}

function isTokenRequest(request: ReceivedRequest): boolean {
  return (
    request.method === "POST" &&
    /\/(authorize\/connect\/token|auth|auth\/v1\/token)$/.test(request.target)
  );
}

/** The answer of an echoing upstream in `mode`. */
export function echoAnswer(mode: EchoMode, item: number) {
  return (request: ReceivedRequest): Answer => {
    const fail = (status: number): Answer =>
      status === 401
        ? {
            status,
            body: {
              error: "invalid_client",
              error_description: echoOf(request, item, "invalid_client: ".length),
              message: echoOf(request, item, 0),
            },
          }
        : { status, raw: echoOf(request, item, 0), contentType: "text/plain" };
    if (isTokenRequest(request)) {
      if (mode === "token_401") return fail(401);
      if (mode === "token_500") return fail(500);
      return {
        status: 200,
        body: {
          access_token: ECHO_TOKEN,
          token: ECHO_TOKEN,
          token_type: "Bearer",
          expires_in: 3600,
          "expires-at": new Date(Date.now() + 3_600_000).toISOString(),
        },
      };
    }
    return fail(mode === "resource_401" ? 401 : 500);
  };
}
