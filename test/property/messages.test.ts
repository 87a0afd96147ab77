import type { SQSRecord } from "aws-lambda";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { finalizeMessage } from "../../lib/cloud/aws/messages";
import type { CloudConfig } from "../../lib/cloud/config";
import { finalizeRecord } from "../../lib/cloud/finalize";
import { silentTelemetry } from "../../lib/cloud/observability";
import { schedule, syncNowRequest } from "../../lib/cloud/scheduler";
import { processJobMessage } from "../../lib/cloud/syncWorker";
import { BlacklineSyncer, loadBlacklineConfig } from "../../lib/connectors/blackline";
import { loadValimailConfig, ValimailSyncer } from "../../lib/connectors/valimail";
import { ConfigError } from "../../lib/errors";
import { newRequestContext } from "../../lib/http";
import type { Logger } from "../../lib/logging";
import {
  InvalidJobError,
  indexCursor,
  type Job,
  jobSchema,
  pageCursor,
  parseCursor,
  parseJob,
  runJob,
  type Syncer,
} from "../../lib/sync";
import {
  isDotSegment,
  pathSegments,
  type RecordingServer,
  startRecordingServer,
} from "./recordingServer";
import { expectTypedError, hostileText, IO_RUNS } from "./settings";

/**
 * Queue messages (a sync job, a finalize message, a scheduler event) come from outside the
 * process: any of them is a valid message or a typed, precise refusal, never an exception of
 * another kind; and a job, whatever its cursor and parent, asks only the configured host for
 * one of the connector's own endpoints.
 */

const VALID_JOB: Job = {
  v: 1,
  syncId: "5f0c2b8e-1d2a-4a4e-9d1e-3c3f1e2b9a10",
  connector: "blackline",
  connectorId: "blackline-prod",
  resourceType: "team",
  op: "members",
  cursor: { page: 1, seen: 0 },
  parent: { type: "team", id: "7" },
};
const JOB_FIELDS = Object.keys(VALID_JOB) as (keyof Job)[];

/** A valid job with one field replaced (or removed, or an extra key added). */
const brokenJob = fc.oneof(
  fc
    .record({ field: fc.constantFrom(...JOB_FIELDS), value: fc.anything() })
    .map(({ field, value }) => ({
      field: field as string,
      job: { ...VALID_JOB, [field]: value } as unknown,
    })),
  fc.constantFrom(...JOB_FIELDS).map((field) => {
    const job: Record<string, unknown> = { ...VALID_JOB };
    delete job[field];
    return { field: field as string, job: job as unknown };
  }),
  fc
    .string({ minLength: 1 })
    .map((key) => ({ field: key, job: { ...VALID_JOB, [key]: 1 } as unknown })),
);

const cursorLike = fc.oneof(
  fc.anything(),
  fc.record(
    {
      page: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null)),
      startIndex: fc.oneof(fc.integer({ min: -5, max: 2 ** 40 }), fc.double()),
      seen: fc.oneof(fc.nat(), fc.integer(), fc.string()),
      previous: fc.oneof(fc.string(), fc.integer()),
      pages: fc.oneof(fc.nat(), fc.integer()),
      anchor: fc.string(),
      withMembers: fc.oneof(fc.boolean(), fc.string()),
    },
    { requiredKeys: [] },
  ),
);

describe("queue messages (property)", () => {
  it("parseJob: a job, or InvalidJobError naming the field", () => {
    fc.assert(
      fc.property(brokenJob, ({ field, job }) => {
        let parsed: Job;
        try {
          parsed = parseJob(job);
        } catch (error) {
          expect(InvalidJobError.is(error)).toBe(true);
          expect((error as Error).message).toMatch(/^not a sync job: /);
          expect((error as Error).message).toContain(field);
          return;
        }
        expect(jobSchema.safeParse(parsed).success).toBe(true);
      }),
    );
    fc.assert(
      fc.property(fc.anything(), (input) => {
        try {
          parseJob(input);
        } catch (error) {
          expect(InvalidJobError.is(error)).toBe(true);
        }
      }),
    );
  });

  it("parseCursor: a cursor of the schema, or InvalidJobError saying the cursor is bad", () => {
    fc.assert(
      fc.property(cursorLike, fc.constantFrom(pageCursor, indexCursor), (cursor, schema) => {
        try {
          const parsed = parseCursor(schema, { ...VALID_JOB, cursor });
          expect(schema.safeParse(parsed).success).toBe(true);
        } catch (error) {
          expect(InvalidJobError.is(error)).toBe(true);
          expect((error as Error).message).toContain("bad cursor");
        }
      }),
    );
  });

  describe("the cloud functions' messages", () => {
    const config: CloudConfig = {
      stage: "property",
      instancesTable: "instances",
      runsTable: "runs",
      idempotencyTable: "idempotency",
      shardsBucket: "shards",
      // Never reached: every message here is refused before any AWS call.
      syncJobsQueueUrl: "http://127.0.0.1:9/jobs",
      finalizeQueueUrl: "http://127.0.0.1:9/finalize",
      instanceChecksQueueUrl: "http://127.0.0.1:9/instance-checks",
      secretsPrefix: "access-connectors/property/",
      jobMaxReceives: 5,
      runStallSeconds: 900,
      instanceJobsInFlight: 8,
    };
    const errors: string[] = [];
    const logger: Logger = {
      debug: () => {},
      info: () => {},
      warn: () => {},
      error: (message) => errors.push(message),
    };
    const telemetry = silentTelemetry(logger);
    const body = fc.oneof(
      fc.string(),
      fc.jsonValue().map((v) => JSON.stringify(v)),
      brokenJob.map(({ job }) => JSON.stringify(job)),
      fc.anything().map((v) => JSON.stringify(v) ?? "undefined"),
    );

    it("sync worker: a message that is not a job is logged and dropped, never thrown", async () => {
      await fc.assert(
        fc.asyncProperty(body, async (text) => {
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {}
          fc.pre(!jobSchema.safeParse(json).success);
          errors.length = 0;
          const record = { messageId: "m-1", body: text, attributes: {} } as unknown as SQSRecord;
          await processJobMessage(record, { config, telemetry, remainingMs: () => 60_000 });
          expect(errors).toEqual(["not a sync job, dropped"]);
        }),
        { numRuns: 60 },
      );
    });

    it("finalize: a message that is not a finalize message is logged and dropped", async () => {
      await fc.assert(
        fc.asyncProperty(body, async (text) => {
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {}
          fc.pre(!finalizeMessage.safeParse(json).success);
          errors.length = 0;
          await expect(finalizeRecord(text, config, telemetry)).resolves.toBeUndefined();
          expect(errors).toEqual(["not a finalize message, dropped"]);
        }),
        { numRuns: 60 },
      );
    });

    it("scheduler: an event of neither shape is a ConfigError saying which shapes it takes", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.anything(),
            fc.record({ connectorId: hostileText }),
            fc.record({ "detail-type": hostileText }),
          ),
          async (event) => {
            fc.pre(!syncNowRequest.safeParse(event).success);
            fc.pre(
              !(
                typeof event === "object" &&
                event !== null &&
                (event as Record<string, unknown>)["detail-type"] === "Scheduled Event"
              ),
            );
            const error = await schedule(event, config, telemetry).catch((e: unknown) => e);
            expect(ConfigError.is(error)).toBe(true);
            expect((error as Error).message).toContain("connectorId");
          },
        ),
        { numRuns: 60 },
      );
    });
  });

  describe("jobs drive requests only to the configured host and the connector's endpoints", () => {
    let server: RecordingServer;
    beforeAll(async () => {
      server = await startRecordingServer();
    });
    afterAll(() => server.close());

    /** Mostly plausible jobs (so they reach the upstream), with hostile values mixed in. */
    const jobArb = fc.record({
      v: fc.constant(1 as const),
      syncId: fc.constant(VALID_JOB.syncId),
      connector: fc.constantFrom("blackline", "valimail"),
      connectorId: fc.constant("instance-1"),
      resourceType: fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom("user", "team", "role", "membership") },
        { weight: 1, arbitrary: hostileText },
      ),
      op: fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom("plan", "list", "members", "membersOf") },
        { weight: 1, arbitrary: hostileText },
      ),
      cursor: fc.oneof(
        { weight: 2, arbitrary: fc.constant(undefined) },
        { weight: 2, arbitrary: fc.constantFrom({ page: 1, seen: 0 }, { startIndex: 1, seen: 0 }) },
        { weight: 1, arbitrary: cursorLike },
        {
          weight: 1,
          arbitrary: fc.record({
            ids: fc.array(
              fc.oneof(hostileText, fc.constantFrom("..", "%2e%2e", "a/../b", "7", "x?y#z")),
              { maxLength: 3 },
            ),
          }),
        },
      ),
      parent: fc.option(
        fc.record({
          type: fc.oneof(
            { weight: 4, arbitrary: fc.constantFrom("team", "user") },
            { weight: 1, arbitrary: hostileText },
          ),
          id: fc.oneof(
            hostileText,
            fc.constantFrom(".", "..", "%2e%2e", ".%2E", "a/../b", "7", "a b", "x?y#z", "\ud800"),
          ),
        }),
        { freq: 4, nil: undefined },
      ),
    });

    const TOKEN_PATHS = ["authorize/connect/token", "auth"];
    /** The endpoints a job may ask, from what it is: its list, or its parent's memberships. */
    function endpointsOf(job: Job): string[] {
      if (job.connector === "valimail") return ["accounts/acme/scim/v2/Users"];
      if (job.op === "plan") return ["v1/users", "v1/teams"];
      if (job.op === "list") return [`v1/${job.resourceType}s`];
      if (job.op === "membersOf") {
        const ids = (job.cursor as { ids?: unknown } | undefined)?.ids;
        return Array.isArray(ids)
          ? ids.map((id) =>
              job.resourceType === "team" ? `v1/teams/${id}/users` : `v1/users/${id}/teams`,
            )
          : [];
      }
      if (job.op === "members" && job.parent) {
        return [
          job.parent.type === "team"
            ? `v1/teams/${job.parent.id}/users`
            : `v1/users/${job.parent.id}/teams`,
        ];
      }
      return [];
    }

    function connectors(): Record<string, Syncer> {
      const retry = { maxAttempts: 1 };
      return {
        blackline: new BlacklineSyncer(
          loadBlacklineConfig({
            CONNECTOR_ACCOUNTING_CLIENT_ID: "c",
            CONNECTOR_ACCOUNTING_CLIENT_SECRET: "property-secret",
            CONNECTOR_ACCOUNTING_USERNAME: "u",
            CONNECTOR_ACCOUNTING_API_KEY: "property-key",
            CONNECTOR_ACCOUNTING_SCOPE:
              "DataIngestionAPI instance_3f2504e0-4f89-11d3-9a0c-0305e82c3301",
            CONNECTOR_ACCOUNTING_BASE_URL: server.url,
            CONNECTOR_ACCOUNTING_REQUESTS_PER_SECOND: "0",
            CONNECTOR_ACCOUNTING_PAGE_SIZE: "5",
          }),
          { retry, timeoutMs: 2_000 },
        ),
        valimail: new ValimailSyncer(
          loadValimailConfig({
            CONNECTOR_EMAILAUTH_CLIENT_ID: "property-client",
            CONNECTOR_EMAILAUTH_APP_ID: "property-app",
            CONNECTOR_EMAILAUTH_SLUG: "acme",
            CONNECTOR_EMAILAUTH_BASE_URL: server.url,
            CONNECTOR_EMAILAUTH_REQUESTS_PER_SECOND: "0",
          }),
          { retry, timeoutMs: 2_000 },
        ),
      };
    }

    it("any job: a page or a typed error; every request on the configured host, at an allowed path", async () => {
      server.answer = (request) => {
        if (request.target.startsWith("/authorize/connect/token")) {
          return {
            status: 200,
            body: { access_token: "t-1", expires_in: 3600, token_type: "Bearer" },
          };
        }
        if (request.target === "/auth") {
          return {
            status: 200,
            body: { token: "t-2", "expires-at": new Date(Date.now() + 3_600_000).toISOString() },
          };
        }
        if (request.target.includes("/scim/v2/"))
          return { status: 200, body: { totalResults: 0, Resources: [] } };
        return { status: 200, body: { items: [], totalItems: 0 } };
      };
      const origin = new URL(server.url).host;
      await fc.assert(
        fc.asyncProperty(jobArb, async (job) => {
          server.reset();
          const connector = connectors()[job.connector] as Syncer;
          try {
            await runJob(connector, job, newRequestContext());
          } catch (error) {
            expectTypedError(error);
          }
          for (const address of server.fetched) expect(new URL(address).host).toBe(origin);
          for (const request of server.received) {
            expect(request.host).toBe(origin);
            const raw = (request.target.split("?")[0] ?? "").split("/").slice(1);
            expect(raw.some(isDotSegment)).toBe(false);
            const path = pathSegments(request.target).join("/");
            const allowed = [...TOKEN_PATHS, ...endpointsOf(job)];
            expect(allowed, `unexpected request ${request.method} ${request.target}`).toContain(
              path,
            );
          }
        }),
        IO_RUNS,
      );
    });
  });
});
