import { z } from "zod";
import type { Bound } from "../../config";
import { describeIssues } from "../../errors";
import type { RequestContext, UpstreamOptions } from "../../http";
import {
  describeJob,
  firstPageCursor,
  InvalidJobError,
  type Job,
  type JobSpec,
  nextPageCursor,
  type Page,
  type PageCursor,
  pageCursor,
  parseCursor,
  type ResourceTypeRecord,
  type SnapshotRecord,
  type SyncConnector,
  unknownJob,
  type ValidationReport,
} from "../../sync";
import { upstreamId } from "../upstreamId";
import { BlacklineApi } from "./BlacklineApi";
import type { BlacklineConfig } from "./config";
import {
  FIRST_PAGE,
  ROLES_PATH,
  TEAMS_PATH,
  teamUsersPath,
  USERS_PATH,
  userTeamsPath,
} from "./constants";
import {
  RESOURCE_TYPES,
  roleRecords,
  teamMembershipGrant,
  teamRecords,
  userResource,
  userRoleGrants,
} from "./mappers";
import { idOnly, role, team, user } from "./models";

/** Which side of the team memberships is walked: one request (or more) per object of that side. */
const membershipSide = z.enum(["team", "user"]);
type MembershipSide = z.infer<typeof membershipSide>;

const listCursor = pageCursor.extend({ withMembers: z.boolean().optional() });
type ListCursor = z.infer<typeof listCursor>;

const firstPage = firstPageCursor(FIRST_PAGE);

/** For a server that ignores `page`: one page then holds the whole list. */
function repeatedPageHint(totalItems: number | undefined): string {
  return `Set CONNECTOR_ACCOUNTING_PAGE_SIZE to at least ${totalItems ?? "the number of items"} so that one page holds the whole list`;
}

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
  readonly #maxPages: Bound;
  readonly syncDeadline: Bound;

  constructor(config: BlacklineConfig, options: UpstreamOptions = {}) {
    this.#api = new BlacklineApi(config, options);
    this.#pageSize = config.pageSize;
    this.#maxPages = config.bounds.maxPagesPerList;
    this.syncDeadline = config.bounds.syncDeadlineMs;
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

  async runJob(job: Job, ctx: RequestContext): Promise<Page> {
    switch (job.op) {
      case OP.plan:
        return this.#plan(ctx);
      case OP.list:
        return this.#list(job, ctx);
      case OP.members:
        return this.#members(job, ctx);
      default:
        throw unknownJob(this.name, job);
    }
  }

  async validate(ctx: RequestContext): Promise<ValidationReport> {
    const token = await this.#api.token(ctx);
    const users = await this.#api.listPage(USERS_PATH, user, FIRST_PAGE, 1, ctx);
    const seconds = Math.round((token.expiresAt - Date.now()) / 1000);
    return {
      checks: [
        `token issued by the password grant (valid for ${seconds} s)`,
        `users readable (${users.totalItems ?? "unknown number of"} users)`,
      ],
    };
  }

  async #plan(ctx: RequestContext): Promise<Page> {
    const [users, teams] = await Promise.all([
      this.#api.listPage(USERS_PATH, idOnly, FIRST_PAGE, 1, ctx),
      this.#api.listPage(TEAMS_PATH, idOnly, FIRST_PAGE, 1, ctx),
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

  async #list(job: Job, ctx: RequestContext): Promise<Page> {
    const cursor = parseCursor(listCursor, job);
    switch (job.resourceType) {
      case "user": {
        const page = await this.#api.listPage(USERS_PATH, user, cursor.page, this.#pageSize, ctx);
        const records = page.items.flatMap((u) => [userResource(u), ...userRoleGrants(u)]);
        return this.#listPage(job, cursor, page.items, page.totalItems, records);
      }
      case "team": {
        const page = await this.#api.listPage(TEAMS_PATH, team, cursor.page, this.#pageSize, ctx);
        return this.#listPage(
          job,
          cursor,
          page.items,
          page.totalItems,
          page.items.flatMap(teamRecords),
        );
      }
      case "role": {
        const page = await this.#api.listPage(ROLES_PATH, role, cursor.page, this.#pageSize, ctx);
        return this.#listPage(
          job,
          cursor,
          page.items,
          page.totalItems,
          page.items.flatMap(roleRecords),
        );
      }
      default:
        throw unknownJob(this.name, job);
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
      maxPages: this.#maxPages,
      what: describeJob(job),
      hint: repeatedPageHint(totalItems),
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

  async #members(job: Job, ctx: RequestContext): Promise<Page> {
    const parent = job.parent;
    const side = membershipSide.safeParse(parent?.type);
    if (!parent || !side.success) throw unknownJob(this.name, job);
    // The parent's id becomes a path segment: `..` from a queue message must not reach another endpoint.
    const parentId = upstreamId.safeParse(parent.id);
    if (!parentId.success) {
      throw new InvalidJobError(
        `${describeJob(job)}: bad parent id (${describeIssues(parentId.error.issues, "parent.id")})`,
      );
    }
    const cursor: PageCursor = job.cursor === undefined ? firstPage : parseCursor(pageCursor, job);
    const path = side.data === "team" ? teamUsersPath(parent.id) : userTeamsPath(parent.id);
    const page = await this.#api.listPage(path, idOnly, cursor.page, this.#pageSize, ctx);
    const ids = page.items.map((item) => item.id);
    const records = ids.map((id) =>
      side.data === "team"
        ? teamMembershipGrant(parent.id, id)
        : teamMembershipGrant(id, parent.id),
    );
    const next = nextPageCursor({
      cursor,
      ids,
      totalItems: page.totalItems,
      pageSize: this.#pageSize,
      maxPages: this.#maxPages,
      what: describeJob(job),
      hint: repeatedPageHint(page.totalItems),
    });
    return { records, ...(next ? { next } : {}) };
  }
}
