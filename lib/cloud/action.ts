import type { Context } from "aws-lambda";
import { type ActionReply, type ActionRequest, replayAction, runAction } from "../actions";
import { newRequestContext } from "../http";
import { IdempotentReplies } from "./aws/idempotentReplies";
import type { CloudConfig } from "./config";
import { openInstance } from "./instanceRuntime";
import type { Telemetry } from "./observability";

/** Made at the first request, and kept while the function is warm. */
let replies: IdempotentReplies<ActionRequest, ActionReply> | undefined;

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
  replies ??= new IdempotentReplies(config.idempotencyTable, "[connectorId, action, args]");
  return replayAction(event, {
    memory: replies.memory(lambdaContext),
    run: async (request, logger) =>
      runAction(
        request,
        async () => (await openInstance(config, request.connectorId)).provisioner(),
        newRequestContext({ logger, onRateLimit: "throw" }),
      ),
    logger: telemetry.logger,
  });
}
