import { createHash } from "node:crypto";
import { newRequestContext } from "../http";
import { type Logger, withFields } from "../logging";
import { RequestIdTakenError } from "./errors";
import type { ActionReply } from "./reply";
import { type ActionRequest, actionRequest } from "./request";
import { failedReply, runAction } from "./runAction";

/**
 * What a runtime remembers of replies by `requestId`: the service's state file (through
 * `replyMemoryOf`), the cloud's idempotency table (Powertools idempotency on DynamoDB). Action
 * replies by default; the cloud's settings function remembers its own replies the same way.
 */
export interface ReplyMemory<
  Request extends { requestId: string } = ActionRequest,
  Reply = ActionReply,
> {
  /**
   * The reply remembered for `request.requestId`, without running anything; otherwise runs `run`
   * and remembers what it returns. When `run` throws, nothing is remembered and the error is
   * thrown. Throws `RequestIdTakenError` when the id was remembered for another request
   * (`request_id_reused`) or is being run right now elsewhere (`request_in_progress`).
   */
  once(request: Request, run: () => Promise<Reply>): Promise<Reply>;
}

/**
 * Carries out `request` at most once per `requestId` through `memory`: a reply that `retryable`
 * says may succeed if asked again is answered but not remembered, so that a retry runs again.
 * `ran` says whether `run` ran now (false: the first reply was remembered). Throws
 * `RequestIdTakenError` as `ReplyMemory.once` does.
 */
export async function answerOnce<Request extends { requestId: string }, Reply>(
  memory: ReplyMemory<Request, Reply>,
  request: Request,
  run: () => Promise<Reply>,
  retryable: (reply: Reply) => boolean,
): Promise<{ reply: Reply; ran: boolean }> {
  let ran = false;
  try {
    const reply = await memory.once(request, async () => {
      ran = true;
      const reply = await run();
      if (retryable(reply)) throw new UnrememberedReply(reply);
      return reply;
    });
    return { reply, ran };
  } catch (error) {
    if (error instanceof UnrememberedReply) return { reply: error.reply, ran };
    throw error;
  }
}

/** Replies kept by `requestId`, each with a fingerprint of the request it answered. */
export interface ReplyStore {
  reply(requestId: string): { fingerprint: string; reply: ActionReply } | undefined;
  remember(fingerprint: string, reply: ActionReply): Promise<void>;
}

/** The memory over a store of replies (one process runs one action at a time: none is in progress elsewhere). */
export function replyMemoryOf(store: ReplyStore): ReplyMemory {
  return {
    async once(request, run) {
      const fingerprint = createHash("sha256").update(JSON.stringify(request)).digest("hex");
      const remembered = store.reply(request.requestId);
      if (remembered) {
        if (remembered.fingerprint !== fingerprint)
          throw new RequestIdTakenError("request_id_reused", request.requestId);
        return remembered.reply;
      }
      const reply = await run();
      await store.remember(fingerprint, reply);
      return reply;
    },
  };
}

export interface ReplayOptions {
  memory: ReplyMemory;
  /** Carries out a valid request (with the runtime's provisioner, deadline and signal). */
  run: (request: ActionRequest, logger: Logger) => Promise<ActionReply>;
  logger: Logger;
}

/**
 * One action request, carried out at most once per `requestId` (docs/actions.md), the
 * same for the service's tasks and the cloud's action function: a malformed request is answered
 * `invalid_request` before anything else (no memory, no secret, no token) and not remembered; a
 * `requestId` seen before gets its first reply and nothing runs; the same `requestId` with a
 * different request is refused; a new one runs, and its reply is remembered unless it says to
 * try again (`rate_limited`, `upstream_error`), so that the platform's retry runs it again.
 */
export async function replayAction(raw: unknown, options: ReplayOptions): Promise<ActionReply> {
  const parsed = actionRequest.safeParse(raw);
  if (!parsed.success) {
    const reply = await runAction(raw, unreachableProvisioner, newRequestContext());
    options.logger.warn("action request refused", { requestId: reply.requestId, error: reply });
    return reply;
  }
  const request = parsed.data;
  const { requestId } = request;
  const log = withFields(options.logger, { requestId, action: request.action });
  try {
    const { reply, ran } = await answerOnce(
      options.memory,
      request,
      async () => {
        const reply = await options.run(request, log);
        if (reply.status === "succeeded") log.info("action succeeded", { result: reply.result });
        else log.warn("action failed", { code: reply.error.code, reason: reply.error.message });
        return reply;
      },
      (reply) => reply.status === "failed" && reply.error.retryable,
    );
    if (!ran) {
      log.info("action done before; answering with its first reply", { status: reply.status });
    }
    return reply;
  } catch (error) {
    if (!RequestIdTakenError.is(error)) throw error;
    if (error.code === "request_in_progress") {
      return failedReply(
        requestId,
        "upstream_error",
        `${error.message}; ask again for its reply in a moment`,
      );
    }
    log.warn("requestId used before for a different request");
    return failedReply(
      requestId,
      "invalid_request",
      `${error.message}; use a new requestId for a new request`,
    );
  }
}

/** Carries a reply to try again out of `ReplyMemory.once`, so that it is not remembered. */
class UnrememberedReply<Reply> extends Error {
  override name = "UnrememberedReply";
  readonly reply: Reply;

  constructor(reply: Reply) {
    super("a reply to try again is not remembered");
    this.reply = reply;
  }
}

function unreachableProvisioner(): never {
  throw new Error("a malformed request reaches no provisioner");
}
