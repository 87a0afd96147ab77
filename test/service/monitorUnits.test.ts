import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { ConfigError, CredentialsRejectedError } from "../../lib/errors";
import { NetworkError } from "../../lib/http";
import { silentLogger } from "../../lib/logging";
import { json, startHttpEndpoint } from "../../lib/service/httpEndpoint";
import { loadHttpSettings, localUrlOf } from "../../lib/service/httpSettings";
import { failureKindOf, Readiness } from "../../lib/service/readiness";
import { parsePromText } from "./promText";

/** The issues of the ConfigError `load` throws. */
function issuesOf(load: () => unknown) {
  try {
    load();
  } catch (error) {
    if (ConfigError.is(error)) return error.issues;
    throw error;
  }
  throw new Error("no ConfigError");
}

describe("CONNECTOR_HTTP_PORT and CONNECTOR_HTTP_HOST", () => {
  it("no port: no listener; a port: on loopback unless a host is given (brackets of an IPv6 address dropped)", () => {
    expect(loadHttpSettings({})).toBeUndefined();
    expect(
      loadHttpSettings({ CONNECTOR_HTTP_PORT: " ", CONNECTOR_HTTP_HOST: "0.0.0.0" }),
    ).toBeUndefined();
    expect(loadHttpSettings({ CONNECTOR_HTTP_PORT: "9090" })).toEqual({
      host: "127.0.0.1",
      port: 9090,
    });
    expect(loadHttpSettings({ CONNECTOR_HTTP_PORT: "0", CONNECTOR_HTTP_HOST: "[::]" })).toEqual({
      host: "::",
      port: 0,
    });
    expect(localUrlOf({ host: "0.0.0.0", port: 9090 })).toBe("http://127.0.0.1:9090");
    expect(localUrlOf({ host: "::1", port: 9090 })).toBe("http://[::1]:9090");
  });

  it("a port out of range or not a number, and a host pasted as a URL, name the variable and what to write", () => {
    expect(issuesOf(() => loadHttpSettings({ CONNECTOR_HTTP_PORT: "70000" }))).toEqual([
      { variable: "CONNECTOR_HTTP_PORT", message: "must be at most 65535" },
    ]);
    expect(
      issuesOf(() =>
        loadHttpSettings({
          CONNECTOR_HTTP_PORT: "http",
          CONNECTOR_HTTP_HOST: "http://0.0.0.0:9090",
        }),
      ),
    ).toEqual([
      { variable: "CONNECTOR_HTTP_PORT", message: "must be a whole number from 0 to 65535" },
      {
        variable: "CONNECTOR_HTTP_HOST",
        message: expect.stringMatching(
          /^is not an address to listen on; give an IP address \(0\.0\.0\.0/,
        ),
      },
    ]);
  });
});

describe("the endpoint's listener", () => {
  it("a port another process holds fails the start naming CONNECTOR_HTTP_PORT (exit 2); HEAD answers without a body", async () => {
    const other = createServer();
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    const { port } = other.address() as AddressInfo;
    const routes = { "/livez": () => json(200, { alive: true }) };
    try {
      const error = await startHttpEndpoint(
        { host: "127.0.0.1", port },
        routes,
        silentLogger,
      ).catch((e: unknown) => e);
      expect(ConfigError.is(error) && error.exitCode).toBe(2);
      expect((error as Error).message).toMatch(
        new RegExp(
          `^CONNECTOR_HTTP_PORT: cannot listen on 127\\.0\\.0\\.1:${port} \\(EADDRINUSE\\)`,
        ),
      );
    } finally {
      other.close();
    }
    const endpoint = await startHttpEndpoint({ host: "127.0.0.1", port: 0 }, routes, silentLogger);
    const head = await fetch(`${endpoint.url}/livez?x=1`, { method: "HEAD" });
    expect([head.status, await head.text(), head.headers.get("content-length")]).toEqual([
      200,
      "",
      "15",
    ]);
    await endpoint.close();
    await expect(fetch(`${endpoint.url}/livez`)).rejects.toThrow();
  });
});

describe("readiness", () => {
  it("waits for both sides, turns 503 on refused credentials until the side answers again, and on stopping", () => {
    const readiness = new Readiness();
    expect(readiness.problems().map((p) => [p.check, p.reason])).toEqual([
      ["platform", "not_reached_yet"],
      ["upstream", "not_reached_yet"],
    ]);
    readiness.platformReached();
    readiness.upstreamReached();
    expect(readiness.problems()).toEqual([]);
    // An outage is waited out, not a reason to be unready.
    readiness.failed("upstream", "upstream_unreachable", "ECONNREFUSED");
    expect(readiness.problems()).toEqual([]);
    readiness.failed("upstream", "credentials_rejected", "Valimail rejected the credentials");
    expect(readiness.problems()).toEqual([
      {
        check: "upstream",
        reason: "credentials_rejected",
        detail: "Valimail rejected the credentials",
      },
    ]);
    readiness.upstreamReached();
    readiness.stopping();
    expect(readiness.problems().map((p) => p.reason)).toEqual(["stopping"]);
  });

  it("tells whose a failure is: a network error of a sync is the upstream's, of the loop the platform's", () => {
    const network = new NetworkError({ method: "GET", path: "/Users" }, "connect ECONNREFUSED");
    expect(failureKindOf(network, "upstream")).toBe("upstream_unreachable");
    expect(failureKindOf(network, "platform")).toBe("platform_unavailable");
    expect(failureKindOf(new CredentialsRejectedError("invalid_client"), "upstream")).toBe(
      "credentials_rejected",
    );
    expect(failureKindOf(new ConfigError([{ variable: "X", message: "bad" }]), "upstream")).toBe(
      "config_invalid",
    );
    expect(failureKindOf(new Error("?"), "upstream")).toBe("other");
  });
});

describe("the tests' Prometheus text reader", () => {
  it("reads families, labels with escapes and special values, and refuses what the format does not allow", () => {
    const families = parsePromText(
      [
        "# HELP a_total A counter.",
        "# TYPE a_total counter",
        'a_total{k="x\\"y\\\\z",l="1"} 3',
        "# TYPE h histogram",
        'h_bucket{le="+Inf"} 2',
        "h_sum 0.5",
        "h_count 2",
        "# TYPE g gauge",
        "g NaN",
        "",
      ].join("\n"),
    );
    expect(families.get("a_total")?.samples).toEqual([
      { name: "a_total", labels: { k: 'x"y\\z', l: "1" }, value: 3 },
    ]);
    expect(families.get("h")?.samples.map((s) => s.name)).toEqual(["h_bucket", "h_sum", "h_count"]);
    for (const bad of [
      "# TYPE a counter\na{k=1} 1\n",
      "# TYPE a counter\na 1x\n",
      "# TYPE a counter\na 1\na 2\n",
      "# TYPE h histogram\nh_bucket 1\n",
      "# TYPE a counter\na 1",
      "# TYPE a counter\na 1\n# TYPE a gauge\n",
    ]) {
      expect(() => parsePromText(bad), bad).toThrow();
    }
  });
});
