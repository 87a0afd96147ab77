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
  type ReplyMemory,
  RequestIdTakenError,
  replayAction,
  runAction,
} from "../actions";
import { newRequestContext } from "../http";
import type { CloudConfig } from "./config";
import { openInstance } from "./instanceRuntime";
import type { Telemetry } from "./observability";

/** Replies are remembered this long: a platform retrying within a day gets the first reply. */
const REMEMBER_SECONDS = 24 * 3600;

/**
 * The action function (docs/actions.md, docs/cloud.md): the action replay of lib/actions, shared
 * with the service, over Powertools idempotency on DynamoDB (the request's `requestId` is the key,
 * its connector, action and arguments the payload checked). A malformed request is answered
 * `invalid_request` before any AWS call; a 429 upstream answers `rate_limited` at once (waiting
 * it out could outlast the function).
 */
export async function handleAction(
  event: unknown,
  lambdaContext: Context,
  config: CloudConfig,
  telemetry: Telemetry,
): Promise<ActionReply> {
  return replayAction(event, {
    memory: idempotencyMemory(config, lambdaContext),
    run: async (request, logger) =>
      runAction(
        request,
        async () => (await openInstance(config, request.connectorId)).provisioner(),
        newRequestContext({ logger, onRateLimit: "throw" }),
      ),
    logger: telemetry.logger,
  });
}

type IdempotentRun = (
  request: ActionRequest,
  run: () => Promise<ActionReply>,
) => Promise<ActionReply>;

/** Made at the first valid request, and kept while the function is warm. */
let idempotentRun: IdempotentRun | undefined;
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

/** The reply memory on the idempotency table: one record per `requestId`, kept a day. */
function idempotencyMemory(config: CloudConfig, lambdaContext: Context): ReplyMemory {
  return {
    async once(request, run) {
      idempotentRun ??= makeIdempotent(
        (_request: ActionRequest, work: () => Promise<ActionReply>) => work(),
        {
          persistenceStore: new DynamoDBPersistenceLayer({ tableName: config.idempotencyTable }),
          config: idempotencyConfigFor(),
        },
      );
      idempotencyConfigFor().registerLambdaContext(lambdaContext);
      try {
        return await idempotentRun(request, run);
      } catch (error) {
        if (error instanceof IdempotencyValidationError) {
          throw new RequestIdTakenError("request_id_reused", request.requestId);
        }
        if (error instanceof IdempotencyAlreadyInProgressError) {
          throw new RequestIdTakenError("request_in_progress", request.requestId);
        }
        throw error;
      }
    },
  };
}
