export { ActionError } from "./errors";
export * from "./reply";
export {
  type ActionRequest,
  actionRequest,
  type CreateAccountArgs,
} from "./request";
export { failedReply, runAction } from "./runAction";
export type { Provisioner } from "./types";
