export { ActionError, RequestIdTakenError } from "./errors";
export {
  answerOnce,
  type ReplyMemory,
  type ReplyStore,
  replayAction,
  replyMemoryOf,
} from "./replay";
export * from "./reply";
export {
  type ActionRequest,
  actionRequest,
  type CreateAccountArgs,
} from "./request";
export { failedReply, runAction } from "./runAction";
export type { Provisioner } from "./types";
