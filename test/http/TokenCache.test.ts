// TokenCache with a store shared beyond this process (the cloud's workers: `sharedTokens`). The
// store here is an in-memory stand-in for the runs table item (test/aws/sharedTokens.test.ts runs
// the real one on moto_server); the upstream's token endpoint is a counting function.
import { describe, expect, it } from "vitest";
import { type AccessToken, newRequestContext, type SharedTokens, TokenCache } from "../../lib/http";

function memoryStore(): SharedTokens & { kept?: AccessToken } {
  const store: SharedTokens & { kept?: AccessToken } = {
    load: async () => store.kept,
    save: async (token) => {
      store.kept = token;
    },
  };
  return store;
}

function countingEndpoint() {
  let issued = 0;
  return {
    fetch: async (): Promise<AccessToken> => ({
      value: `token-${++issued}`,
      expiresAt: Date.now() + 3_600_000,
    }),
    issued: () => issued,
  };
}

describe("TokenCache with a shared store", () => {
  it("takes a token another process kept, and keeps the one it fetched", async () => {
    const store = memoryStore();
    const endpoint = countingEndpoint();
    const ctx = newRequestContext({ sharedTokens: store });

    expect(await new TokenCache(endpoint.fetch).get(ctx)).toBe("token-1");
    expect(store.kept?.value).toBe("token-1");
    expect(await new TokenCache(endpoint.fetch).get(ctx)).toBe("token-1");
    expect(endpoint.issued()).toBe(1);
  });

  it("fetches after a 401 whatever the store holds, and takes no token about to expire", async () => {
    const store = memoryStore();
    const endpoint = countingEndpoint();
    const ctx = newRequestContext({ sharedTokens: store });
    const cache = new TokenCache(endpoint.fetch);
    const rejected = await cache.get(ctx);

    // After a 401 the next token is the upstream's, though the store holds another (it may be
    // dead too, and a request has one refresh after a 401).
    store.kept = { value: "another", expiresAt: Date.now() + 3_600_000 };
    cache.invalidate(rejected);
    expect(await cache.get(ctx)).toBe("token-2");
    expect(store.kept?.value).toBe("token-2");

    store.kept = { value: "nearly-expired", expiresAt: Date.now() + 30_000 };
    expect(await new TokenCache(endpoint.fetch).get(ctx)).toBe("token-3");
  });

  it("fetches its own when the store cannot be read, and says so", async () => {
    const warnings: string[] = [];
    const ctx = newRequestContext({
      sharedTokens: {
        load: () => Promise.reject(new Error("table unreachable")),
        save: () => Promise.reject(new Error("table unreachable")),
      },
    });
    ctx.logger = { ...ctx.logger, warn: (message: string) => void warnings.push(message) };
    const endpoint = countingEndpoint();

    expect(await new TokenCache(endpoint.fetch).get(ctx)).toBe("token-1");
    expect(warnings).toEqual([
      "the shared token could not be read",
      "the shared token could not be kept",
    ]);
  });
});
