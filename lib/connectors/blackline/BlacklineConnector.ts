import { z } from "zod";
import type { HttpCounters } from "../../http";
import type { ResourceTypeRecord, SnapshotRecord } from "../../sync";
import { describeJob, type Job, type JobSpec, type Page } from "../../sync";
import type { ApiOptions, SyncConnector, ValidationReport } from "../types";
import { BlacklineApi } from "./BlacklineApi";
import type { BlacklineConfig } from "./config";
import { ROLES_PATH, TEAMS_PATH, teamUsersPath, USERS_PATH, userTeamsPath } from "./constants";
import {
  RESOURCE_TYPES,
  roleRecords,
  teamMembershipGrant,
  teamRecords,
  userResource,
  userRoleGrants,
} from "./mappers";
import { idOnly, role, team, user } from "./models";
import { firstPage, nextPageCursor, pageCursor } from "./paging";

/** Which side of the team memberships is walked: one request (or more) per object of that side. */
const membershipSide = z.enum(["team", "user"]);
type MembershipSide = z.infer<typeof membershipSide>;

const listCursor = pageCursor.extend({ withMembers: z.boolean().optional() });
type ListCursor = z.infer<typeof listCursor>;

const OP = { plan: "plan", list: "list", members: "members" } as const;

/**
 * BlackLine, read-only. A sync starts with a `plan` job that reads the number of users and teams
 * (two one-item requests) and lists them, walking memberships from the smaller side; roles are
 * listed alongside, and role assignments come from the user records.
 */
export class BlacklineConnector implements SyncConnector {
  readonly name = "blackline";
  readonly #api: BlacklineApi;
  readonly #pageSize: number;

  constructor(config: BlacklineConfig, options: ApiOptions = {}) {
    this.#api = new BlacklineApi(config, options);
    this.#pageSize = config.pageSize;
  }

  get counters(): HttpCounters {
    return this.#api.counters;
  }

  resourceTypes(): ResourceTypeRecord[] {
    return RESOURCE_TYPES;
  }

  rootJobs(): JobSpec[] {
    return [
      { resourceType: "membership", op: OP.plan },
      { resourceType: "role", op: OP.list, cursor: firstPage },
    ];
  }

  async runJob(job: Job): Promise<Page> {
    switch (job.op) {
      case OP.plan:
        return this.#plan();
      case OP.list:
        return this.#list(job);
      case OP.members:
        return this.#members(job);
      default:
        throw new Error(`BlackLine has no job ${describeJob(job)}`);
    }
  }

  async validate(): Promise<ValidationReport> {
    const token = await this.#api.token();
    const users = await this.#api.listPage(USERS_PATH, user, 1, 1);
    const seconds = Math.round((token.expiresAt - Date.now()) / 1000);
    return {
      checks: [
        `token issued by the password grant (valid for ${seconds} s)`,
        `users readable (${users.totalItems ?? "unknown number of"} users)`,
      ],
    };
  }

  async #plan(): Promise<Page> {
    const [users, teams] = await Promise.all([
      this.#api.listPage(USERS_PATH, idOnly, 1, 1),
      this.#api.listPage(TEAMS_PATH, idOnly, 1, 1),
    ]);
    // Without counts, teams are the usual smaller side.
    const side: MembershipSide =
      users.totalItems !== undefined &&
      teams.totalItems !== undefined &&
      users.totalItems < teams.totalItems
        ? "user"
        : "team";
    return {
      records: [],
      children: [
        {
          resourceType: "user",
          op: OP.list,
          cursor: { ...firstPage, withMembers: side === "user" },
        },
        {
          resourceType: "team",
          op: OP.list,
          cursor: { ...firstPage, withMembers: side === "team" },
        },
      ],
    };
  }

  async #list(job: Job): Promise<Page> {
    const cursor = listCursor.parse(job.cursor);
    switch (job.resourceType) {
      case "user": {
        const page = await this.#api.listPage(USERS_PATH, user, cursor.page, this.#pageSize);
        const records = page.items.flatMap((u) => [userResource(u), ...userRoleGrants(u)]);
        return this.#listPage(job, cursor, page.items, page.totalItems, records);
      }
      case "team": {
        const page = await this.#api.listPage(TEAMS_PATH, team, cursor.page, this.#pageSize);
        return this.#listPage(
          job,
          cursor,
          page.items,
          page.totalItems,
          page.items.flatMap(teamRecords),
        );
      }
      case "role": {
        const page = await this.#api.listPage(ROLES_PATH, role, cursor.page, this.#pageSize);
        return this.#listPage(
          job,
          cursor,
          page.items,
          page.totalItems,
          page.items.flatMap(roleRecords),
        );
      }
      default:
        throw new Error(`BlackLine has no job ${describeJob(job)}`);
    }
  }

  #listPage(
    job: Job,
    cursor: ListCursor,
    items: readonly { id: string }[],
    totalItems: number | undefined,
    records: SnapshotRecord[],
  ): Page {
    const ids = items.map((item) => item.id);
    const next = nextPageCursor({
      cursor,
      ids,
      totalItems,
      pageSize: this.#pageSize,
      what: describeJob(job),
    });
    const children: JobSpec[] = cursor.withMembers
      ? ids.map((id) => ({
          resourceType: job.resourceType,
          op: OP.members,
          parent: { type: job.resourceType, id },
        }))
      : [];
    return {
      records,
      children,
      ...(next ? { next: { ...next, withMembers: cursor.withMembers } } : {}),
    };
  }

  async #members(job: Job): Promise<Page> {
    const parent = job.parent;
    if (!parent) throw new Error(`BlackLine job ${describeJob(job)} has no parent`);
    const cursor = job.cursor === undefined ? firstPage : pageCursor.parse(job.cursor);
    const side = membershipSide.parse(parent.type);
    const path = side === "team" ? teamUsersPath(parent.id) : userTeamsPath(parent.id);
    const page = await this.#api.listPage(path, idOnly, cursor.page, this.#pageSize);
    const ids = page.items.map((item) => item.id);
    const records = ids.map((id) =>
      side === "team" ? teamMembershipGrant(parent.id, id) : teamMembershipGrant(id, parent.id),
    );
    const next = nextPageCursor({
      cursor,
      ids,
      totalItems: page.totalItems,
      pageSize: this.#pageSize,
      what: describeJob(job),
    });
    return { records, ...(next ? { next } : {}) };
  }
}
