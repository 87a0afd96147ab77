import * as z from "zod";
import { describeIssues } from "../../errors";
import { askingAhead, Prefetched, type RequestContext, type UpstreamOptions } from "../../http";
import {
  describeJob,
  firstPageCursor,
  InvalidJobError,
  type Job,
  type JobSpec,
  nextPageCursor,
  PAGES_AHEAD,
  type Page,
  type PageCursor,
  pageCursor,
  pageQuery,
  pagesAhead,
  parseCursor,
  type RecordSink,
  unknownJob,
  type ValidationReport,
} from "../../sync";
import { PagedSyncer, secondsValid } from "../PagedSyncer";
import { upstreamId } from "../upstreamId";
import { BlacklineApi, type ListEndpoint } from "./BlacklineApi";
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
import { role, team, user } from "./models";
import type { RecordsPage } from "./recordsPage";

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

function isList(type: string): type is keyof typeof LISTS {
  return Object.hasOwn(LISTS, type);
}

/** The members of a team, or the teams of a user, whichever side is walked. */
function membershipList(side: MembershipSide, id: string): ListEndpoint {
  return side === "team"
    ? { path: teamUsersPath(id), name: `BlackLine members of team ${id}` }
    : { path: userTeamsPath(id), name: `BlackLine teams of user ${id}` };
}

const OP = { plan: "plan", list: "list", members: "members", membersOf: "membersOf" } as const;

/**
 * A list page's membership walk goes out in groups: one job reads the first membership page of
 * each of at least MEMBER_GROUP items (most teams fit one page), and a page asks for at most
 * MEMBER_GROUPS_PER_PAGE groups, so a job's children stay few (docs/cloud.md, "Jobs").
 */
const MEMBER_GROUP = 50;
const MEMBER_GROUPS_PER_PAGE = 40;

/** A group job's items, whose first membership pages it reads. */
const memberGroupCursor = z.object({ ids: z.array(upstreamId).min(1).max(MAX_PAGE_SIZE) }).strict();

/** The ids of a page split into membership groups, in order. */
export function memberGroups(ids: readonly string[]): string[][] {
  const size = Math.max(MEMBER_GROUP, Math.ceil(ids.length / MEMBER_GROUPS_PER_PAGE));
  const groups: string[][] = [];
  for (let at = 0; at < ids.length; at += size) groups.push(ids.slice(at, at + size));
  return groups;
}

/**
 * BlackLine, read-only. A sync starts with a `plan` job that reads the first pages of users and
 * teams, whose totals say which side is the smaller, and goes on from them: their records, their
 * next pages, and the membership walk from the smaller side. Roles are listed alongside, and role
 * assignments come from the user records.
 */
export class BlacklineSyncer extends PagedSyncer {
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

  async runJob(job: Job, ctx: RequestContext, sink?: RecordSink): Promise<Page> {
    switch (job.op) {
      case OP.plan:
        return this.#plan(ctx);
      case OP.list:
        return this.#list(job, ctx, sink);
      case OP.members:
        return this.#members(job, ctx);
      case OP.membersOf:
        return this.#membersOf(job, ctx);
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

  /**
   * The first pages of users and teams, read together. Each list goes on as a list job would
   * from its first page; the membership walk starts from the side with fewer items, teams when
   * either total is missing (the usual smaller side). No records go to a sink: the two pages come
   * in either order, and their records are written users first.
   */
  async #plan(ctx: RequestContext): Promise<Page> {
    const query = pageQuery(firstPage, this.pageSize.value);
    const [users, teams] = await Promise.all([
      this.#api.listRecords(LISTS.user, user, userRecords, query, ctx),
      this.#api.listRecords(LISTS.team, team, teamRecords, query, ctx),
    ]);
    const side: MembershipSide =
      users.totalItems !== undefined &&
      teams.totalItems !== undefined &&
      users.totalItems < teams.totalItems
        ? "user"
        : "team";
    const firstOf = (list: "user" | "team", page: RecordsPage) =>
      this.#listPage(list, { ...firstPage, withMembers: side === list }, page);
    const pages = { user: firstOf("user", users), team: firstOf("team", teams) };
    const lists = Object.entries(pages);
    return {
      records: [...pages.user.records, ...pages.team.records],
      // The lists' next pages first: a list read page after page is the sync's longest chain.
      children: [
        ...lists.flatMap(([resourceType, page]) =>
          page.next ? [{ resourceType, op: OP.list, cursor: page.next }] : [],
        ),
        ...lists.flatMap(([, page]) => page.children ?? []),
      ],
    };
  }

  async #list(job: Job, ctx: RequestContext, sink?: RecordSink): Promise<Page> {
    const cursor = parseCursor(listCursor, job);
    const query = pageQuery(cursor, this.pageSize.value);
    const type = job.resourceType;
    if (!isList(type)) throw unknownJob(this.name, job);
    const reading = this.#readPage(type, query, ctx, sink);
    // The list's next pages go out behind this one; each is still judged by its own job, in order.
    this.#api.askAhead(LISTS[type], pagesAhead(cursor, query), ctx);
    return this.#listPage(type, cursor, await reading);
  }

  #readPage(
    type: keyof typeof LISTS,
    query: { page: number; pageSize: number },
    ctx: RequestContext,
    sink: RecordSink | undefined,
  ): Promise<RecordsPage> {
    switch (type) {
      case "user":
        return this.#api.listRecords(LISTS.user, user, userRecords, query, ctx, sink);
      case "team":
        return this.#api.listRecords(LISTS.team, team, teamRecords, query, ctx, sink);
      case "role":
        return this.#api.listRecords(LISTS.role, role, roleRecords, query, ctx, sink);
    }
  }

  /** A list's page: its records, the membership jobs of its items if it has them, its next page. */
  #listPage(resourceType: keyof typeof LISTS, cursor: ListCursor, page: RecordsPage): Page {
    const { ids, records } = page;
    const next = nextPageCursor({
      cursor,
      ids,
      totalItems: page.totalItems,
      pageSize: this.pageSize,
      maxPages: this.maxPages,
      what: LISTS[resourceType].name,
    });
    const children: JobSpec[] = cursor.withMembers
      ? memberGroups(ids).map((group) => ({
          resourceType,
          op: OP.membersOf,
          cursor: { ids: group },
        }))
      : [];
    return {
      records,
      children,
      ...(next ? { next: { ...next, withMembers: cursor.withMembers } } : {}),
    };
  }

  /**
   * The first membership page of each item of a group; an item with more pages goes on as its
   * own `members` job from the second page. An item that fails after the first ends the group
   * there (the items read ahead that came are kept), and so do 40 items with more pages: the
   * items not read go on as a group job.
   */
  async #membersOf(job: Job, ctx: RequestContext): Promise<Page> {
    const side = membershipSide.safeParse(job.resourceType);
    if (!side.success) throw unknownJob(this.name, job);
    const { ids } = parseCursor(memberGroupCursor, job);
    // In order, the next PAGES_AHEAD items' pages on their way while one is read, as a list's
    // pages are: one request at a time, a group is a chain of 50 round trips (each a shared slot's
    // wait in the cloud). An item not reached when the group ends early is a request lost.
    const ahead = new Prefetched();
    const behind = askingAhead(ctx);
    const read: { id: string; page: Page }[] = [];
    let longLists = 0;
    const add = (id: string, page: Page) => {
      read.push({ id, page });
      if (page.next) longLists++;
    };
    // Few enough children for one commit: past a page's worth of long lists, the rest waits.
    const full = () => longLists >= MEMBER_GROUPS_PER_PAGE;
    try {
      for (let at = 0; at < ids.length && !full(); at++) {
        const id = ids[at] as string;
        const current = ahead.take<Page>(id) ?? this.#membershipPage(side.data, id, firstPage, ctx);
        const following = ids.slice(at + 1, at + 1 + PAGES_AHEAD);
        for (const next of following) {
          ahead.start(next, () => this.#membershipPage(side.data, next, firstPage, behind));
        }
        let page: Page;
        try {
          page = await current;
        } catch (error) {
          // What was read is kept, the items read ahead that came too (a rate limit met mid-group
          // would otherwise discard them every time); the rest goes on as a group of its own,
          // which meets the error anew.
          if (read.length === 0) throw error;
          for (const next of following) {
            const came = await ahead.take<Page>(next)?.catch(() => undefined);
            if (!came || full()) break;
            add(next, came);
          }
          break;
        }
        add(id, page);
      }
    } finally {
      // Nothing read ahead is left running when the job returns (its request counted, not resumed).
      await ahead.settled();
    }
    const done = new Set(read.map((r) => r.id));
    const rest = ids.filter((id) => !done.has(id));
    const continued: JobSpec[] = read.flatMap(({ id, page }) =>
      page.next
        ? [
            {
              resourceType: side.data,
              op: OP.members,
              parent: { type: side.data, id },
              cursor: page.next,
            },
          ]
        : [],
    );
    return {
      records: read.flatMap(({ page }) => page.records),
      children: [
        ...continued,
        ...(rest.length > 0
          ? [{ resourceType: side.data, op: OP.membersOf, cursor: { ids: rest } }]
          : []),
      ],
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
    return this.#membershipPage(side.data, parent.id, cursor, ctx);
  }

  /** One page of an item's memberships: its grants, and its next page when it has one. */
  async #membershipPage(
    side: MembershipSide,
    id: string,
    cursor: PageCursor,
    ctx: RequestContext,
  ): Promise<Page> {
    const list = membershipList(side, id);
    const page = await this.#api.listIds(list, pageQuery(cursor, this.pageSize.value), ctx);
    const { ids } = page;
    const records = membershipGrants(side, id, ids);
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
