export { ActionError } from "./errors";
export * from "./reply";
export {
  ACTIONS,
  type ActionName,
  type ActionRequest,
  actionRequest,
  type CreateAccountArgs,
} from "./request";
export { runAction } from "./runAction";
