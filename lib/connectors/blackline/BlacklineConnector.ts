import { z } from "zod";
import { describeIssues } from "../../errors";
import type { RequestContext, UpstreamOptions } from "../../http";
import {
  describeJob,
  firstPageCursor,
  InvalidJobError,
  idOf,
  type Job,
  type JobSpec,
  nextPageCursor,
  type Page,
  type PageCursor,
  pageCursor,
  pageQuery,
  parseCursor,
  type SnapshotRecord,
  unknownJob,
  type ValidationReport,
} from "../../sync";
import { PagedConnector, secondsValid } from "../PagedConnector";
import { upstreamId } from "../upstreamId";
import { BlacklineApi, type ListEndpoint, type ListPage } from "./BlacklineApi";
import type { BlacklineConfig } from "./config";
import {
  FIRST_PAGE,
  MAX_PAGE_SIZE,
  ROLES_PATH,
  TEAMS_PATH,
  teamUsersPath,
  USERS_PATH,
  userTeamsPath,
} from "./constants";
import { membershipGrants, RESOURCE_TYPES, roleRecords, teamRecords, userRecords } from "./mappers";
import { idOnly, role, team, user } from "./models";

/** Which side of the team memberships is walked: one request (or more) per object of that side. */
const membershipSide = z.enum(["team", "user"]);
type MembershipSide = z.infer<typeof membershipSide>;

const listCursor = pageCursor.extend({ withMembers: z.boolean().optional() });
type ListCursor = z.infer<typeof listCursor>;

const firstPage = firstPageCursor(FIRST_PAGE);

const LISTS = {
  user: { path: USERS_PATH, name: "BlackLine users" },
  team: { path: TEAMS_PATH, name: "BlackLine teams" },
  role: { path: ROLES_PATH, name: "BlackLine roles" },
} as const satisfies Record<string, ListEndpoint>;

/** The members of a team, or the teams of a user, whichever side is walked. */
function membershipList(side: MembershipSide, id: string): ListEndpoint {
  return side === "team"
    ? { path: teamUsersPath(id), name: `BlackLine members of team ${id}` }
    : { path: userTeamsPath(id), name: `BlackLine teams of user ${id}` };
}

const OP = { plan: "plan", list: "list", members: "members" } as const;

/**
 * BlackLine, read-only. A sync starts with a `plan` job that reads the number of users and teams
 * (two one-item requests) and lists them, walking memberships from the smaller side; roles are
 * listed alongside, and role assignments come from the user records.
 */
export class BlacklineConnector extends PagedConnector {
  readonly name = "blackline";
  readonly #api: BlacklineApi;

  constructor(config: BlacklineConfig, options: UpstreamOptions = {}) {
    super(config, MAX_PAGE_SIZE, RESOURCE_TYPES);
    this.#api = new BlacklineApi(config, options);
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
    const users = await this.#api.listPage(
      LISTS.user,
      user,
      { page: FIRST_PAGE, pageSize: 1 },
      ctx,
    );
    return {
      checks: [
        `token issued by the password grant (valid for ${secondsValid(token)} s)`,
        `users readable (${users.totalItems ?? "unknown number of"} users)`,
      ],
    };
  }

  async #plan(ctx: RequestContext): Promise<Page> {
    const count = { page: FIRST_PAGE, pageSize: 1 };
    const [users, teams] = await Promise.all([
      this.#api.listPage(LISTS.user, idOnly, count, ctx),
      this.#api.listPage(LISTS.team, idOnly, count, ctx),
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
    const query = pageQuery(cursor, this.pageSize.value);
    switch (job.resourceType) {
      case "user": {
        const page = await this.#api.listPage(LISTS.user, user, query, ctx);
        return this.#listPage(job, LISTS.user, cursor, page, page.items.flatMap(userRecords));
      }
      case "team": {
        const page = await this.#api.listPage(LISTS.team, team, query, ctx);
        return this.#listPage(job, LISTS.team, cursor, page, page.items.flatMap(teamRecords));
      }
      case "role": {
        const page = await this.#api.listPage(LISTS.role, role, query, ctx);
        return this.#listPage(job, LISTS.role, cursor, page, page.items.flatMap(roleRecords));
      }
      default:
        throw unknownJob(this.name, job);
    }
  }

  #listPage(
    job: Job,
    list: ListEndpoint,
    cursor: ListCursor,
    page: ListPage<{ id: string }>,
    records: SnapshotRecord[],
  ): Page {
    const ids = page.items.map(idOf);
    const next = nextPageCursor({
      cursor,
      ids,
      totalItems: page.totalItems,
      pageSize: this.pageSize,
      maxPages: this.maxPages,
      what: list.name,
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
    const list = membershipList(side.data, parent.id);
    const page = await this.#api.listIds(list, pageQuery(cursor, this.pageSize.value), ctx);
    const { ids } = page;
    const records = membershipGrants(side.data, parent.id, ids);
    const next = nextPageCursor({
      cursor,
      ids,
      totalItems: page.totalItems,
      pageSize: this.pageSize,
      maxPages: this.maxPages,
      what: list.name,
    });
    return { records, ...(next ? { next } : {}) };
  }
}
