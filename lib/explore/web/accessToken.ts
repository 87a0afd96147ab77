/**
 * The page's key. `access-connectors explore` prints `http://127.0.0.1:PORT/#token=...`: a
 * fragment, which the browser never sends to a server (nor in a Referer). The page takes it once,
 * keeps it in localStorage (scoped to this origin, 127.0.0.1:PORT: no other port's page reads it;
 * other tabs of the page share it, a reload keeps it), drops it from the address bar, and sends it
 * as `Authorization: Bearer` on every API call. No cookie: the browser would send it to every port.
 */
const KEY = "access-connectors-explore-token";

/** What the page says without a token, or with one the server refused (server.ts says the same). */
export const NO_TOKEN =
  "open the URL with the token that `access-connectors explore` printed (it ends in #token=...)";

/** Events on `window`: the server refused the token (or there is none); a token was taken. */
export const TOKEN_REFUSED = "explore:token-refused";
export const TOKEN_TAKEN = "explore:token-taken";

/**
 * Takes the token from `#token=...`, replacing the history entry so it leaves the address bar;
 * says whether there was one.
 */
export function takeTokenFromAddress(): boolean {
  const match = /^#token=([A-Za-z0-9_-]+)$/.exec(location.hash);
  if (!match) return false;
  store(match[1] as string);
  history.replaceState(null, "", `${location.pathname}${location.search}`);
  return true;
}

// A browser that blocks site storage throws on localStorage: the token is then kept in this
// document only (a reload asks for the printed URL again).
let kept: string | null = null;
function store(token: string | null) {
  kept = token;
  try {
    if (token === null) localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, token);
  } catch {}
}

export function accessToken(): string | null {
  try {
    return localStorage.getItem(KEY) ?? kept;
  } catch {
    return kept;
  }
}

/** A token the server refused is forgotten: a new run of the command makes a new one. */
export const forgetToken = () => store(null);
