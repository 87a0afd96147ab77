import * as z from "zod";
import type {
  CreateAccountArgs,
  CreateAccountResult,
  MemberTypeResult,
  UserStateResult,
} from "../../actions";
import { ActionError, type Provisioner } from "../../actions";
import { NetworkError, type RequestContext } from "../../http";
import { patchOp, replace, ScimError } from "../../scim";
import type { ValimailConfig } from "./config";
import {
  DEFAULT_MEMBER_TYPE,
  MAX_CREATE_ATTEMPTS,
  MEMBER_TYPE_PATH,
  MEMBER_TYPES,
  type MemberType,
} from "./constants";
import { memberTypeFromEntitlementId } from "./mappers";
import { isActive, memberTypeOf, type ScimUser } from "./models";
import type { ValimailApi } from "./ValimailApi";

const memberType = z.enum(MEMBER_TYPES);

/**
 * Valimail provisioning. Every write is refused unless provisioning is on; every action reads the
 * current state first and writes only what differs, so a repeated request writes nothing; writes
 * are PATCH `replace` (idempotent) or a POST that is never repeated blindly.
 */
export class ValimailProvisioner implements Provisioner {
  readonly #api: ValimailApi;
  readonly #config: ValimailConfig;

  constructor(config: ValimailConfig, api: ValimailApi) {
    this.#config = config;
    this.#api = api;
  }

  enableUser(userId: string, ctx: RequestContext): Promise<UserStateResult> {
    return this.#setActive(userId, true, ctx);
  }

  disableUser(userId: string, ctx: RequestContext): Promise<UserStateResult> {
    return this.#setActive(userId, false, ctx);
  }

  async createAccount(args: CreateAccountArgs, ctx: RequestContext): Promise<CreateAccountResult> {
    const type = parseMemberType(args.member_type ?? DEFAULT_MEMBER_TYPE, "args.member_type");
    this.#requireProvisioning();
    const existing = await this.#api.findUserByUserName(args.email, ctx);
    if (existing) return { user_id: existing.id, created: false };

    for (let attempt = 1; ; attempt++) {
      try {
        const user = await this.#api.createUser(
          {
            email: args.email,
            givenName: args.given_name,
            familyName: args.family_name,
            memberType: type,
          },
          ctx,
        );
        return { user_id: await this.#verifyCreated(user, args.email, type, ctx), created: true };
      } catch (error) {
        if (ActionError.is(error)) throw error;
        if (ScimError.is(error) && error.status === 409) {
          // Someone else created it between our lookup and our POST.
          const user = await this.#api.findUserByUserName(args.email, ctx);
          if (user) return { user_id: user.id, created: false };
          throw new ActionError(
            "upstream_error",
            `Valimail says ${args.email} already exists but does not find it by userName; try again later`,
          );
        }
        if (ScimError.is(error) && error.status === 400 && type === "marketer")
          throw marketerUnavailable();
        const uncertain = NetworkError.is(error) || (ScimError.is(error) && error.status >= 500);
        if (!uncertain || attempt >= MAX_CREATE_ATTEMPTS) throw error;
        // The POST may have landed: look before trying again.
        const user = await this.#api.findUserByUserName(args.email, ctx);
        if (user) return { user_id: user.id, created: true };
      }
    }
  }

  async grant(
    userId: string,
    entitlementId: string,
    ctx: RequestContext,
  ): Promise<MemberTypeResult> {
    const type = memberTypeOfEntitlement(entitlementId);
    this.#requireProvisioning();
    const user = await this.#getUser(userId, ctx);
    if (memberTypeOf(user) === type) return { user_id: user.id, member_type: type, changed: false };
    return this.#setMemberType(user.id, type, ctx);
  }

  async revoke(
    userId: string,
    entitlementId: string,
    ctx: RequestContext,
  ): Promise<MemberTypeResult> {
    const type = memberTypeOfEntitlement(entitlementId);
    if (type === DEFAULT_MEMBER_TYPE) {
      throw new ActionError(
        "revoke_not_allowed",
        `every Valimail user holds exactly one member type, and ${DEFAULT_MEMBER_TYPE} is the one revokes fall back to; grant another member type instead`,
      );
    }
    this.#requireProvisioning();
    const user = await this.#getUser(userId, ctx);
    const current = memberTypeOf(user);
    if (current !== type) return { user_id: user.id, member_type: current ?? "", changed: false };
    return this.#setMemberType(user.id, DEFAULT_MEMBER_TYPE, ctx);
  }

  async #setActive(userId: string, active: boolean, ctx: RequestContext): Promise<UserStateResult> {
    this.#requireProvisioning();
    const user = await this.#getUser(userId, ctx);
    if (isActive(user) === active) return { user_id: user.id, active, changed: false };
    const updated = await this.#api.patchUser(user.id, patchOp(replace("active", active)), ctx);
    // Absent `active` reads as active, but an answer must show the value to count as proof.
    if (updated.active !== active) {
      const current = await this.#readBack(user.id, ctx);
      if (isActive(current) !== active) {
        throw notApplied(`setting active to ${active}`, user.id, `active: ${isActive(current)}`);
      }
    }
    return { user_id: user.id, active, changed: true };
  }

  /**
   * The id of the account a create made, checked: an answer that does not show the member type
   * asked for is read back, and an account that is missing or holds another type is a failure.
   */
  async #verifyCreated(
    answer: ScimUser,
    email: string,
    type: MemberType,
    ctx: RequestContext,
  ): Promise<string> {
    const shown =
      answer.userName.toLowerCase() === email.toLowerCase() && memberTypeOf(answer) === type;
    if (shown) return answer.id;
    const current = await this.#api.getUser(answer.id, ctx);
    if (!current) {
      throw new ActionError(
        "upstream_error",
        `Valimail answered the create of ${email} with user ${answer.id} but has no such user; the account was not created`,
      );
    }
    if (current.userName.toLowerCase() !== email.toLowerCase()) {
      throw new ActionError(
        "upstream_error",
        `Valimail answered the create of ${email} with user ${answer.id}, which reads userName ${current.userName}`,
      );
    }
    const held = memberTypeOf(current);
    if (held !== type) {
      throw new ActionError(
        "upstream_error",
        `Valimail created ${email} as user ${current.id}, but it reads member type ${held ?? "(none)"}, not ${type} as asked; grant ${type} to it`,
      );
    }
    return current.id;
  }

  /** The user after a write whose answer did not show the change. */
  async #readBack(userId: string, ctx: RequestContext): Promise<ScimUser> {
    const current = await this.#api.getUser(userId, ctx);
    if (!current) {
      throw new ActionError(
        "upstream_error",
        `Valimail accepted a PATCH of user ${userId} but no longer finds the user`,
      );
    }
    return current;
  }

  async #setMemberType(
    userId: string,
    type: MemberType,
    ctx: RequestContext,
  ): Promise<MemberTypeResult> {
    try {
      const patch = patchOp(replace(MEMBER_TYPE_PATH, type));
      const updated = await this.#api.patchUser(userId, patch, ctx);
      if (memberTypeOf(updated) !== type) {
        const held = memberTypeOf(await this.#readBack(userId, ctx));
        if (held !== type) {
          throw notApplied(
            `setting the member type to ${type}`,
            userId,
            `member type ${held ?? "(none)"}`,
          );
        }
      }
      return { user_id: userId, member_type: type, changed: true };
    } catch (error) {
      if (ScimError.is(error) && error.status === 400 && type === "marketer")
        throw marketerUnavailable();
      throw error;
    }
  }

  async #getUser(userId: string, ctx: RequestContext): Promise<ScimUser> {
    const user = await this.#api.getUser(userId, ctx);
    if (!user) throw new ActionError("not_found", `Valimail has no user with id ${userId}`);
    return user;
  }

  #requireProvisioning(): void {
    if (this.#config.provisioning) return;
    const setting = this.#config.provisioningSetting;
    throw new ActionError(
      "provisioning_disabled",
      setting === undefined
        ? "provisioning is off: set CONNECTOR_PROVISIONING=true to allow writes to Valimail"
        : `provisioning is off: CONNECTOR_PROVISIONING is "${setting}", and only exactly true allows writes to Valimail`,
    );
  }
}

function parseMemberType(value: string, field: string): MemberType {
  const parsed = memberType.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new ActionError(
    "invalid_request",
    `${field}: "${value}" is not a Valimail member type; use one of ${MEMBER_TYPES.join(", ")}`,
  );
}

function memberTypeOfEntitlement(entitlementId: string): MemberType {
  const type = memberTypeFromEntitlementId(entitlementId);
  if (type === undefined) {
    throw new ActionError(
      "invalid_request",
      `args.entitlement_id: "${entitlementId}" is not a Valimail entitlement; use member_type:<type>:assigned`,
    );
  }
  return parseMemberType(type, "args.entitlement_id");
}

/** A write Valimail accepted (2xx) whose change a read-back does not show. */
function notApplied(change: string, userId: string, reads: string): ActionError {
  return new ActionError(
    "upstream_error",
    `Valimail accepted the PATCH ${change} for user ${userId}, but the user still reads ${reads}: the change did not happen`,
  );
}

function marketerUnavailable(): ActionError {
  return new ActionError(
    "member_type_unavailable",
    "this Valimail account does not offer the marketer member type; grant owner or member instead",
  );
}
