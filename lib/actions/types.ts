import type { RequestContext } from "../http";
import type { CreateAccountResult, MemberTypeResult, UserStateResult } from "./reply";
import type { CreateAccountArgs } from "./request";

/** The write side of a connector: the actions of docs/actions.md, one run's `ctx` per call. */
export interface Provisioner {
  enableUser(userId: string, ctx: RequestContext): Promise<UserStateResult>;
  disableUser(userId: string, ctx: RequestContext): Promise<UserStateResult>;
  createAccount(args: CreateAccountArgs, ctx: RequestContext): Promise<CreateAccountResult>;
  grant(userId: string, entitlementId: string, ctx: RequestContext): Promise<MemberTypeResult>;
  revoke(userId: string, entitlementId: string, ctx: RequestContext): Promise<MemberTypeResult>;
}
