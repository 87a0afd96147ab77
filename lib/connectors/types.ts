import type {
  CreateAccountArgs,
  CreateAccountResult,
  MemberTypeResult,
  UserStateResult,
} from "../actions";
import type { HttpCounters, RetrySettings } from "../http";
import type { Logger } from "../logging";
import type { Job, JobSpec, Page, ResourceTypeRecord } from "../sync";

export const CONNECTOR_NAMES = ["blackline", "valimail"] as const;
export type ConnectorName = (typeof CONNECTOR_NAMES)[number];

/** What `validate` checked, one line each, for the person who runs it. */
export interface ValidationReport {
  checks: string[];
}

/** The read side of a connector: its resource types and the jobs of a full sync. */
export interface SyncConnector {
  readonly name: ConnectorName;
  /** The HTTP counters of this connector's upstream client. */
  readonly counters: HttpCounters;
  resourceTypes(): ResourceTypeRecord[];
  /** The jobs a sync starts with. */
  rootJobs(): JobSpec[];
  runJob(job: Job): Promise<Page>;
  /** One token call and one small read; throws what is wrong. */
  validate(): Promise<ValidationReport>;
}

/** The write side of a connector: the actions of CONTRACTS.md section 4. */
export interface Provisioner {
  enableUser(userId: string): Promise<UserStateResult>;
  disableUser(userId: string): Promise<UserStateResult>;
  createAccount(args: CreateAccountArgs): Promise<CreateAccountResult>;
  grant(userId: string, entitlementId: string): Promise<MemberTypeResult>;
  revoke(userId: string, entitlementId: string): Promise<MemberTypeResult>;
}

/** How a connector's API client is built: a logger, and shorter timeouts and backoff for tests. */
export interface ApiOptions {
  logger?: Logger;
  timeoutMs?: number;
  retry?: Partial<RetrySettings>;
}
