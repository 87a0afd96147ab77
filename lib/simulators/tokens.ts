import { randomBytes } from "node:crypto";

export interface TokenSettings {
  /** Lifetime of issued tokens; they stop working when it passes. Default one hour. */
  tokenLifetimeSeconds?: number;
  /** Reject a token after this many uses, before it expires (revocation). */
  tokenMaxUses?: number;
}

/** The bearer tokens a simulator has issued, each with what it grants (`Claims`). */
export class SimTokens<Claims> {
  readonly #settings: TokenSettings;
  readonly #tokens = new Map<string, { expiresAt: number; uses: number; claims: Claims }>();

  constructor(settings: TokenSettings) {
    this.#settings = settings;
  }

  issue(claims: Claims): { token: string; expiresAt: number; lifetimeSeconds: number } {
    const lifetimeSeconds = this.#settings.tokenLifetimeSeconds ?? 3600;
    const token = randomBytes(24).toString("base64url");
    const expiresAt = Date.now() + lifetimeSeconds * 1000;
    this.#tokens.set(token, { expiresAt, uses: 0, claims });
    return { token, expiresAt, lifetimeSeconds };
  }

  /** The claims of the request's bearer token, or undefined when it is missing, expired or used up (401). */
  check(authorization: string | undefined): Claims | undefined {
    const token = /^Bearer (.+)$/.exec(authorization ?? "")?.[1];
    const entry = token ? this.#tokens.get(token) : undefined;
    if (!entry || entry.expiresAt <= Date.now()) return undefined;
    entry.uses++;
    const maxUses = this.#settings.tokenMaxUses;
    return maxUses !== undefined && entry.uses > maxUses ? undefined : entry.claims;
  }

  issued(): string[] {
    return [...this.#tokens.keys()];
  }
}
