import { answerOnce, type ReplyMemory, RequestIdTakenError } from "../../actions";
import { ConfigError, CredentialsRejectedError, describeIssues, messageOf } from "../../errors";
import { HttpStatusError, isRetryableError } from "../../http";
import { type Logger, withFields } from "../../logging";
import { SettingsError } from "./errors";
import { failedSettings, invalidSettings, type SettingsReply } from "./reply";
import { requestIdPart, type SettingsRequest, settingsRequest } from "./request";
import {
  describeInstance,
  removeInstance,
  type SettingsStage,
  saveInstance,
} from "./stageInstances";
import { testSettings } from "./testSettings";

/** The request id to answer with when the request is too broken to carry one. */
const UNKNOWN_REQUEST_ID = "unknown";

export interface SettingsOptions {
  stage: SettingsStage;
  /** The replies remembered by `requestId` (the function's idempotency table). */
  memory: ReplyMemory<SettingsRequest, SettingsReply>;
  logger: Logger;
}

/**
 * One settings request (docs/settings.md), answered with its reply, never an exception
 * (but for the memory's own failures): a request that does not parse is `invalid_request` before
 * anything is read, stored or sent; a `requestId` seen before gets its first reply and nothing
 * runs (the action replay's `answerOnce`); a reply that may succeed later (`run_in_progress`,
 * `upstream_error`) is not remembered. Log lines carry the request's id, op and instance, and the
 * names of fields at fault, never a setting's value.
 */
export async function answerSettings(
  raw: unknown,
  options: SettingsOptions,
): Promise<SettingsReply> {
  const parsed = settingsRequest.safeParse(raw);
  if (!parsed.success) {
    const requestId = requestIdPart.safeParse(raw);
    const reply = failedSettings(
      requestId.success ? requestId.data.requestId : UNKNOWN_REQUEST_ID,
      "invalid_request",
      describeIssues(parsed.error.issues, "request", Number.POSITIVE_INFINITY),
    );
    options.logger.warn("settings request refused", {
      requestId: reply.requestId,
      error: reply.status === "failed" ? reply.error : undefined,
    });
    return reply;
  }
  const request = parsed.data;
  const { requestId, op } = request;
  const log = withFields(options.logger, { requestId, op, connectorId: request.connectorId });
  try {
    const { reply, ran } = await answerOnce(
      options.memory,
      request,
      () => carryOut(request, options.stage, log),
      (reply) => reply.status === "failed" && reply.error.retryable,
    );
    log.info(ran ? "settings request answered" : "settings request answered before: first reply", {
      status: reply.status,
      ...(reply.status === "failed" ? { code: reply.error.code, reason: reply.error.message } : {}),
      ...(reply.status === "invalid" ? { fields: reply.errors.map((e) => e.field) } : {}),
    });
    return reply;
  } catch (error) {
    if (!RequestIdTakenError.is(error)) throw error;
    if (error.code === "request_in_progress") {
      return failedSettings(
        requestId,
        "upstream_error",
        `${error.message}; ask again for its reply in a moment`,
        { retryable: true },
      );
    }
    log.warn("requestId used before for a different request");
    return failedSettings(
      requestId,
      "invalid_request",
      `${error.message}; use a new requestId for a new request`,
    );
  }
}

async function carryOut(
  request: SettingsRequest,
  stage: SettingsStage,
  logger: Logger,
): Promise<SettingsReply> {
  const { requestId } = request;
  try {
    const result = await perform(request, stage, logger);
    return { requestId, status: "succeeded", result };
  } catch (error) {
    if (ConfigError.is(error)) return invalidSettings(requestId, error.issues);
    if (SettingsError.is(error)) {
      return failedSettings(requestId, error.code, error.message, { retryable: error.retryable });
    }
    const message = messageOf(error);
    if (CredentialsRejectedError.is(error)) {
      return failedSettings(requestId, "auth_failed", message, { field: error.field });
    }
    logger.error("settings request failed", { error: message });
    // An upstream's 4xx stays so when asked again; a store or a network that failed may not.
    const retryable = HttpStatusError.is(error) ? isRetryableError(error) : true;
    return failedSettings(requestId, "upstream_error", message, { retryable });
  }
}

function perform(request: SettingsRequest, stage: SettingsStage, logger: Logger) {
  switch (request.op) {
    case "save":
      return saveInstance(stage, request);
    case "test":
      return testSettings(stage, request, logger);
    case "get":
      return describeInstance(stage, request.connectorId);
    case "remove":
      return removeInstance(stage, request.connectorId, request.force);
  }
}
