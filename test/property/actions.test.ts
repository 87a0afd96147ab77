import type { Context } from "aws-lambda";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACTION_ERROR_CODES, type ActionReply, actionRequest, runAction } from "../../lib/actions";
import { handleAction } from "../../lib/cloud/action";
import type { CloudConfig } from "../../lib/cloud/config";
import { silentTelemetry } from "../../lib/cloud/observability";
import {
  loadValimailConfig,
  ValimailApi,
  ValimailProvisioner,
} from "../../lib/connectors/valimail";
import { newRequestContext } from "../../lib/http";
import { silentLogger } from "../../lib/logging";
import {
  isDotSegment,
  pathSegments,
  type RecordingServer,
  startRecordingServer,
} from "./recordingServer";
import { hostileText, IO_RUNS } from "./settings";

/**
 * Action requests (CLI, service tasks, the cloud action function): any request gets a reply,
 * never an exception; one that does not parse is `invalid_request` naming the field, and nothing
 * is asked of a provisioner; one that parses only ever reaches the configured host, at the
 * account's Users endpoint or the one user's address.
 */

const EXTENSION = "urn:ietf:params:scim:schemas:extension:valimailuserextension:2.0:User";
const ACTIONS = ["enable_user", "disable_user", "create_account", "grant", "revoke"] as const;

const userId = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom("49c398b12b", "u-1", "a.b", "A_9-z") },
  { weight: 2, arbitrary: hostileText },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/) },
);
const entitlement = fc.oneof(
  fc.constantFrom(
    "member_type:owner:assigned",
    "member_type:member:assigned",
    "member_type:marketer:assigned",
    "member_type:admin:assigned",
    "team:7:member",
  ),
  hostileText,
);
const args = fc.record(
  {
    user_id: userId,
    entitlement_id: entitlement,
    email: fc.oneof(fc.constantFrom("ada@example.com", "a+b@x.io"), fc.emailAddress(), hostileText),
    given_name: fc.oneof(fc.constantFrom("Ada", " Ada "), hostileText),
    family_name: fc.oneof(fc.constantFrom("Lovelace"), hostileText),
    member_type: fc.oneof(fc.constantFrom("owner", "member", "marketer"), hostileText),
    extra: fc.anything(),
  },
  { requiredKeys: [] },
);
/** Requests shaped like the real ones, with any field off; and anything at all. */
const request = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record(
      {
        requestId: fc.oneof(fc.uuid(), hostileText, fc.anything()),
        connectorId: fc.oneof(fc.constant("valimail-prod"), hostileText),
        action: fc.oneof(fc.constantFrom(...ACTIONS), hostileText),
        args,
      },
      { requiredKeys: ["action", "args"] },
    ),
  },
  { weight: 1, arbitrary: fc.anything() },
);

/** Requests that mostly parse, so that they reach the upstream. */
const plausibleRequest = fc.constantFrom(...ACTIONS).chain((action) =>
  fc.record({
    requestId: fc.constant("r-1"),
    connectorId: fc.constant("valimail-prod"),
    action: fc.constant(action),
    args:
      action === "create_account"
        ? fc.record(
            {
              email: fc.oneof(fc.constant("ada@example.com"), fc.emailAddress()),
              given_name: fc.constantFrom("Ada", "Grace"),
              family_name: fc.constant("Lovelace"),
              member_type: fc.oneof(fc.constantFrom("owner", "member", "marketer"), hostileText),
            },
            { requiredKeys: ["email", "given_name", "family_name"] },
          )
        : action === "grant" || action === "revoke"
          ? fc.record({ user_id: userId, entitlement_id: entitlement })
          : fc.record({ user_id: userId }),
  }),
);

function expectReply(reply: ActionReply) {
  expect(typeof reply.requestId).toBe("string");
  if (reply.status === "failed") {
    expect(ACTION_ERROR_CODES).toContain(reply.error.code);
    expect(reply.error.message.length).toBeGreaterThan(0);
    expect(reply.error.retryable).toBe(
      ["rate_limited", "upstream_error"].includes(reply.error.code),
    );
  } else {
    expect(reply.status).toBe("succeeded");
    expect(typeof reply.result.user_id).toBe("string");
  }
}

describe("action requests (property)", () => {
  it("a request that does not parse is invalid_request naming the field; no provisioner is asked", async () => {
    await fc.assert(
      fc.asyncProperty(request, async (raw) => {
        let asked = 0;
        const reply = await runAction(
          raw,
          () => {
            asked++;
            throw new Error("refused by the test");
          },
          newRequestContext(),
        );
        expectReply(reply);
        const parsed = actionRequest.safeParse(raw);
        if (parsed.success) {
          expect(asked).toBe(1);
          return;
        }
        expect(asked).toBe(0);
        expect(reply.status === "failed" && reply.error.code).toBe("invalid_request");
        if (reply.status !== "failed") return;
        // Each problem is named by its path in the request (or "request" for the whole).
        for (const issue of parsed.error.issues) {
          const where = issue.path.length > 0 ? issue.path.join(".") : "request";
          expect(reply.error.message).toContain(where);
        }
      }),
    );
  });

  it("the cloud action function answers a malformed request invalid_request, before any AWS call", async () => {
    const config = {
      idempotencyTable: "never-reached",
      secretsPrefix: "never/",
    } as unknown as CloudConfig;
    await fc.assert(
      fc.asyncProperty(request, async (raw) => {
        fc.pre(!actionRequest.safeParse(raw).success);
        const reply = await handleAction(raw, {} as Context, config, silentTelemetry(silentLogger));
        expectReply(reply);
        expect(reply.status === "failed" && reply.error.code).toBe("invalid_request");
      }),
      { numRuns: 80 },
    );
  });

  describe("Valimail provisioning against generated upstream answers", () => {
    let server: RecordingServer;
    beforeAll(async () => {
      server = await startRecordingServer();
    });
    afterAll(() => server.close());

    const upstreamUser = fc.record(
      {
        id: fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom("49c398b12b", "u-1") },
          {
            weight: 1,
            arbitrary: fc.oneof(hostileText, fc.integer(), fc.constant(2 ** 60), fc.constant(null)),
          },
        ),
        userName: fc.oneof(fc.constant("ada@example.com"), hostileText),
        active: fc.oneof(fc.boolean(), fc.constant(null), fc.string()),
        [EXTENSION]: fc.oneof(
          fc.record({
            memberType: fc.oneof(fc.constantFrom("owner", "member", "marketer"), hostileText),
          }),
          fc.anything(),
        ),
        name: fc.anything(),
      },
      { requiredKeys: ["id"] },
    );
    const answer = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({ status: fc.constantFrom(200, 201), body: upstreamUser }),
      },
      {
        weight: 2,
        arbitrary: fc.record({
          status: fc.constant(200),
          body: fc.record(
            {
              totalResults: fc.oneof(fc.nat(3), fc.anything()),
              Resources: fc.array(upstreamUser, { maxLength: 3 }),
            },
            { requiredKeys: [] },
          ),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          status: fc.constantFrom(400, 401, 403, 404, 409, 429, 500, 502),
          body: fc.oneof(fc.constant({ detail: "no", scimType: "invalidValue" }), fc.anything()),
        }),
      },
      { weight: 1, arbitrary: fc.record({ status: fc.constant(200), body: fc.anything() }) },
    );

    it("every action gets a reply; every request is on the configured host, at Users or a user's address", async () => {
      const origin = new URL(server.url).host;
      const config = loadValimailConfig({
        CONNECTOR_EMAILAUTH_CLIENT_ID: "property-client",
        CONNECTOR_EMAILAUTH_APP_ID: "property-app",
        CONNECTOR_EMAILAUTH_SLUG: "acme",
        CONNECTOR_EMAILAUTH_BASE_URL: server.url,
        CONNECTOR_EMAILAUTH_REQUESTS_PER_SECOND: "0",
        // A 429 answer waits within this budget (the least allowed), then fails rate_limited.
        CONNECTOR_EMAILAUTH_RATE_LIMIT_WAIT_SECONDS: "1",
        CONNECTOR_PROVISIONING: "true",
      });
      await fc.assert(
        fc.asyncProperty(
          fc.oneof({ weight: 3, arbitrary: plausibleRequest }, { weight: 1, arbitrary: request }),
          fc.array(answer, { minLength: 1, maxLength: 6 }),
          async (raw, answers) => {
            server.reset();
            let n = 0;
            const served = new Set<string>();
            server.answer = (req) => {
              if (req.target === "/auth") {
                return {
                  status: 200,
                  body: {
                    token: "t-1",
                    "expires-at": new Date(Date.now() + 3_600_000).toISOString(),
                  },
                };
              }
              const next = answers[n++ % answers.length] as { status: number; body: unknown };
              const body = next.body as { id?: unknown; Resources?: { id?: unknown }[] } | null;
              if (body && typeof body === "object") {
                if ("id" in body) served.add(String(body.id));
                for (const r of Array.isArray(body.Resources) ? body.Resources : [])
                  served.add(String(r?.id));
              }
              return next;
            };
            const api = new ValimailApi(config, { retry: { maxAttempts: 1 }, timeoutMs: 2_000 });
            const reply = await runAction(
              raw,
              () => new ValimailProvisioner(config, api),
              newRequestContext({ logger: silentLogger }),
            );
            expectReply(reply);
            const parsed = actionRequest.safeParse(raw);
            const requested =
              parsed.success && "user_id" in parsed.data.args
                ? parsed.data.args.user_id
                : undefined;
            if (!parsed.success) expect(server.received).toEqual([]);
            for (const address of server.fetched) expect(new URL(address).host).toBe(origin);
            for (const req of server.received) {
              expect(req.host).toBe(origin);
              const raws = (req.target.split("?")[0] ?? "").split("/").slice(1);
              expect(raws.some(isDotSegment)).toBe(false);
              const segments = pathSegments(req.target);
              if (segments.join("/") === "auth") continue;
              expect(segments.slice(0, 5).join("/")).toBe("accounts/acme/scim/v2/Users");
              expect(segments.length).toBeLessThanOrEqual(6);
              if (segments.length === 6) {
                const id = segments[5] as string;
                expect(id === requested || served.has(id), `request for user ${id}`).toBe(true);
              }
            }
          },
        ),
        IO_RUNS,
      );
    });
  });
});
