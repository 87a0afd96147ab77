import { describe, expect, it } from "vitest";
import { ActionError } from "../../lib/actions";
import { CONNECTORS, connectorNamed, parseConnectorName } from "../../lib/connectors";
import { ConfigError } from "../../lib/errors";

const TUNING = [
  "MAX_CONCURRENCY",
  "REQUESTS_PER_SECOND",
  "RATE_LIMIT_WAIT_SECONDS",
  "PAGE_SIZE",
  "MAX_RESPONSE_MIB",
  "REQUEST_TIMEOUT",
  "MAX_PAGES_PER_LIST",
  "SYNC_DEADLINE",
];

const VALIMAIL = {
  CONNECTOR_EMAILAUTH_CLIENT_ID: "client",
  CONNECTOR_EMAILAUTH_APP_ID: "app",
  CONNECTOR_EMAILAUTH_SLUG: "acme",
};

describe("connector definitions", () => {
  it("every connector reads the shared tuning under its prefix, each bound naming its variable", () => {
    for (const connector of CONNECTORS) {
      for (const name of TUNING) {
        expect(connector.variables).toContain(`${connector.variablePrefix}_${name}`);
      }
      expect(() => connector.sync({ [`${connector.variablePrefix}_PAGE_SIZE`]: "0" })).toThrow(
        expect.objectContaining({
          issues: expect.arrayContaining([
            expect.objectContaining({ variable: `${connector.variablePrefix}_PAGE_SIZE` }),
          ]),
        }),
      );
    }
  });

  it("a read-only connector answers every write unsupported before it reads a setting", () => {
    const blackline = connectorNamed(parseConnectorName("BlackLine"));
    const refused = (() => {
      try {
        blackline.provisioner({});
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(ActionError);
    expect(refused).toMatchObject({ code: "unsupported" });
    expect(blackline.capabilities({})).toEqual(["sync"]);
  });

  it("writes are announced only when the settings switch them on", () => {
    const valimail = connectorNamed("valimail");
    expect(valimail.capabilities(VALIMAIL)).toEqual(["sync"]);
    expect(valimail.capabilities({ ...VALIMAIL, CONNECTOR_PROVISIONING: "yes" })).toEqual(["sync"]);
    // The whole list a host announces is pinned by the service's test of its hello.
    const on = valimail.capabilities({ ...VALIMAIL, CONNECTOR_PROVISIONING: "true" });
    expect(on[0]).toBe("sync");
    expect(on).toContain("disable_user");
    expect(() => valimail.provisioner({})).toThrow(ConfigError);
  });
});
