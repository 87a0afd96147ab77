import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  IdempotencyValidationError,
  makeIdempotent,
} from "@aws-lambda-powertools/idempotency";
import { DynamoDBPersistenceLayer } from "@aws-lambda-powertools/idempotency/dynamodb";
import type { Context } from "aws-lambda";
import {
  type ActionReply,
  type ActionRequest,
  actionRequest,
  failedReply,
  runAction,
} from "../actions";
import { newRequestContext } from "../http";
import type { CloudConfig } from "./config";
import { openInstance } from "./instanceRuntime";
import type { Telemetry } from "./observability";

/** Replies are remembered this long: a platform retrying within a day gets the first reply. */
const REMEMBER_SECONDS = 24 * 3600;

/** Carries a retryable reply out of the idempotent function, so that it is not remembered. */
class RetryableReply extends Error {
  readonly reply: ActionReply;

  constructor(reply: ActionReply) {
    super("retryable reply");
    this.reply = reply;
  }
}

let idempotent: ((request: ActionRequest) => Promise<ActionReply>) | undefined;

/**
 * The action function (CONTRACTS.md sections 4 and 6): a malformed request is answered
 * `invalid_request` before anything else (no secret read, no token requested); a valid one runs
 * once per `requestId` (Powertools idempotency on DynamoDB). Only final replies are remembered: a
 * `rate_limited` or `upstream_error` reply is returned but forgotten, so the platform's retry
 * runs the action again. The same `requestId` with a different request is refused.
 */
export async function handleAction(
  event: unknown,
  lambdaContext: Context,
  config: CloudConfig,
  telemetry: Telemetry,
): Promise<ActionReply> {
  const parsed = actionRequest.safeParse(event);
  if (!parsed.success) return runAction(event, unreachable, newRequestContext());
  const request = parsed.data;
  idempotent ??= makeIdempotentAction(config, telemetry);
  idempotencyConfigFor().registerLambdaContext(lambdaContext);
  try {
    return await idempotent(request);
  } catch (error) {
    if (error instanceof RetryableReply) return error.reply;
    if (error instanceof IdempotencyValidationError) {
      return failedReply(
        request.requestId,
        "invalid_request",
        `requestId ${request.requestId} was used before for a different request; use a new requestId for a new request`,
      );
    }
    if (error instanceof IdempotencyAlreadyInProgressError) {
      return failedReply(
        request.requestId,
        "upstream_error",
        `the request ${request.requestId} is being carried out right now; ask again for its reply in a moment`,
      );
    }
    throw error;
  }
}

let sharedConfig: IdempotencyConfig | undefined;

function idempotencyConfigFor(): IdempotencyConfig {
  sharedConfig ??= new IdempotencyConfig({
    eventKeyJmesPath: "requestId",
    payloadValidationJmesPath: "[connectorId, action, args]",
    expiresAfterSeconds: REMEMBER_SECONDS,
    throwOnNoIdempotencyKey: true,
  });
  return sharedConfig;
}

function makeIdempotentAction(config: CloudConfig, telemetry: Telemetry) {
  return makeIdempotent(
    async (request: ActionRequest): Promise<ActionReply> => {
      const reply = await runAction(
        request,
        async () => (await openInstance(config, request.connectorId)).provisioner(),
        // A 429 answers rate_limited (retryable) at once: waiting it out could outlast the function.
        newRequestContext({ logger: telemetry.logger, onRateLimit: "throw" }),
      );
      if (reply.status === "failed" && reply.error.retryable) throw new RetryableReply(reply);
      return reply;
    },
    {
      persistenceStore: new DynamoDBPersistenceLayer({ tableName: config.idempotencyTable }),
      config: idempotencyConfigFor(),
    },
  );
}

function unreachable(): never {
  throw new Error("a malformed request never reaches a provisioner");
}
