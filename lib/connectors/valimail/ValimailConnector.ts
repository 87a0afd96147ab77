import type { HttpCounters } from "../../http";
import { firstListCursor, listCursor, nextListCursor } from "../../scim";
import type { ResourceTypeRecord } from "../../sync";
import { describeJob, type Job, type JobSpec, type Page } from "../../sync";
import type { ApiOptions, SyncConnector, ValidationReport } from "../types";
import type { ValimailConfig } from "./config";
import { BASE_MEMBER_TYPES } from "./constants";
import { memberTypeRecords, RESOURCE_TYPES, userMemberTypeGrant, userResource } from "./mappers";
import { memberTypeOf } from "./models";
import { ValimailApi } from "./ValimailApi";

/**
 * Valimail sync over SCIM: one job per page of users. Every page also yields the member types its
 * users hold (owner and member always, marketer where an account has it), so each grant's
 * entitlement is in the snapshot.
 */
export class ValimailConnector implements SyncConnector {
  readonly name = "valimail";
  readonly #api: ValimailApi;
  readonly #pageSize: number;

  constructor(config: ValimailConfig, options: ApiOptions = {}) {
    this.#api = new ValimailApi(config, options);
    this.#pageSize = config.pageSize;
  }

  get counters(): HttpCounters {
    return this.#api.counters;
  }

  resourceTypes(): ResourceTypeRecord[] {
    return RESOURCE_TYPES;
  }

  rootJobs(): JobSpec[] {
    return [{ resourceType: "user", op: "list", cursor: firstListCursor }];
  }

  async runJob(job: Job): Promise<Page> {
    if (job.resourceType !== "user" || job.op !== "list") {
      throw new Error(`Valimail has no job ${describeJob(job)}`);
    }
    const cursor = listCursor.parse(job.cursor);
    const { users, totalResults } = await this.#api.listUsers(cursor, this.#pageSize);
    const memberTypes = new Set<string>(
      cursor.startIndex === firstListCursor.startIndex ? BASE_MEMBER_TYPES : [],
    );
    for (const user of users) {
      const memberType = memberTypeOf(user);
      if (memberType) memberTypes.add(memberType);
    }
    const next = nextListCursor({
      cursor,
      ids: users.map((u) => u.id),
      totalResults,
      what: "Valimail users",
    });
    return {
      records: [
        ...[...memberTypes].flatMap(memberTypeRecords),
        ...users.flatMap((user) => [userResource(user), ...userMemberTypeGrant(user)]),
      ],
      ...(next ? { next } : {}),
    };
  }

  async validate(): Promise<ValidationReport> {
    const token = await this.#api.token();
    const { totalResults } = await this.#api.listUsers(firstListCursor, 1);
    const seconds = Math.round((token.expiresAt - Date.now()) / 1000);
    return {
      checks: [
        `token issued by /auth (valid for ${seconds} s)`,
        `SCIM users readable (${totalResults ?? "unknown number of"} users)`,
      ],
    };
  }
}
