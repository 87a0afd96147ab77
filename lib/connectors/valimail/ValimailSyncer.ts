import type { RequestContext, UpstreamOptions } from "../../http";
import { FIRST_INDEX } from "../../scim";
import { idOf } from "../../snapshot";
import {
  firstIndexCursor,
  indexCursor,
  indexPagesAhead,
  indexQuery,
  type Job,
  type JobSpec,
  nextIndexCursor,
  type Page,
  parseCursor,
  unknownJob,
  type ValidationReport,
} from "../../sync";
import { PagedSyncer, secondsValid } from "../PagedSyncer";
import type { ValimailConfig } from "./config";
import { BASE_MEMBER_TYPES, MAX_PAGE_SIZE } from "./constants";
import { memberTypeRecords, RESOURCE_TYPES, userRecords } from "./mappers";
import { memberTypeOf } from "./models";
import { ValimailApi } from "./ValimailApi";

const firstPage = firstIndexCursor(FIRST_INDEX);

/**
 * Valimail sync over SCIM: one job per page of users. Every page also yields the member types its
 * users hold (owner and member always, marketer where an account has it), so each grant's
 * entitlement is in the snapshot.
 */
export class ValimailSyncer extends PagedSyncer {
  readonly name = "valimail";
  readonly #api: ValimailApi;

  constructor(config: ValimailConfig, options: UpstreamOptions = {}) {
    super(config, MAX_PAGE_SIZE, RESOURCE_TYPES);
    this.#api = new ValimailApi(config, options);
  }

  rootJobs(): JobSpec[] {
    return [{ resourceType: "user", op: "list", cursor: firstPage }];
  }

  async runJob(job: Job, ctx: RequestContext): Promise<Page> {
    if (job.resourceType !== "user" || job.op !== "list") throw unknownJob(this.name, job);
    const cursor = parseCursor(indexCursor, job);
    const query = indexQuery(cursor, this.pageSize.value);
    const reading = this.#api.listUsers(query, ctx);
    // The list's next pages go out behind this one; each is still judged by its own job, in order.
    this.#api.askAhead(indexPagesAhead(cursor, query), ctx);
    const { users, totalResults } = await reading;
    const memberTypes = new Set<string>(
      cursor.startIndex === firstPage.startIndex ? BASE_MEMBER_TYPES : [],
    );
    for (const user of users) {
      const memberType = memberTypeOf(user);
      if (memberType) memberTypes.add(memberType);
    }
    const next = nextIndexCursor({
      cursor,
      ids: users.map(idOf),
      totalResults,
      pageSize: this.pageSize,
      maxPages: this.maxPages,
      what: "Valimail users",
    });
    return {
      records: [...[...memberTypes].flatMap(memberTypeRecords), ...users.flatMap(userRecords)],
      ...(next ? { next } : {}),
    };
  }

  async validate(ctx: RequestContext): Promise<ValidationReport> {
    const token = await this.#api.token(ctx);
    const { totalResults } = await this.#api.listUsers({ startIndex: FIRST_INDEX, count: 1 }, ctx);
    return {
      checks: [
        `token issued by /auth (valid for ${secondsValid(token)} s)`,
        `SCIM users readable (${totalResults ?? "unknown number of"} users)`,
      ],
    };
  }
}
