import { isPrivileged, type PrivilegedEntitlements } from "../connectors";
import type {
  BodyLine,
  EntitlementLine,
  GrantLine,
  ResourceLine,
  ResourceTypeLine,
  SyncEndLine,
  SyncStartLine,
} from "../snapshot/records";
import { readSnapshotFile } from "../snapshot/snapshotFile";
import { SearchText } from "./SearchText";

/** Lists by an owner's number, in two typed arrays: the owner's items are `items[start[i]..start[i+1]]`. */
export class Adjacency {
  private constructor(
    private readonly start: Int32Array,
    private readonly items: Int32Array,
  ) {}

  /** Groups `0..owners.length` by `owners[item]` (an item with owner -1 is left out). */
  static of(owners: Int32Array, ownerCount: number): Adjacency {
    const start = new Int32Array(ownerCount + 1);
    for (const owner of owners) if (owner >= 0) start[owner + 1] = (start[owner + 1] as number) + 1;
    for (let i = 0; i < ownerCount; i++)
      start[i + 1] = (start[i + 1] as number) + (start[i] as number);
    const next = start.slice(0, ownerCount);
    const items = new Int32Array(start[ownerCount] as number);
    owners.forEach((owner, item) => {
      if (owner >= 0) items[(next[owner] as number)++] = item;
    });
    return new Adjacency(start, items);
  }

  of(owner: number): Int32Array {
    return this.items.subarray(this.start[owner], this.start[owner + 1]);
  }
}

/** The records as read, grants as numbers where their ends were already read. */
interface RecordsRead {
  resourceTypes: ResourceTypeLine[];
  resources: ResourceLine[];
  entitlements: EntitlementLine[];
  resourceAt: Map<string, number>;
  entitlementAt: Map<string, number>;
  grantEntitlement: number[];
  grantPrincipal: number[];
  pending: GrantLine[];
}

/** One entitlement an account holds: the grant that gives it, and the team it comes through. */
export interface Holding {
  grant: number;
  /** The group (team) whose membership passes the grant on; absent for a direct grant. */
  via?: number;
}

/** One holder of an entitlement: the account, the grant, and the team it comes through. */
export interface Holder {
  resource: number;
  grant: number;
  via?: number;
}

export const resourceKey = (type: string, id: string) => `${type}:${id}`;

/**
 * A snapshot held in memory for the review page, built once at start: records in arrays, grants
 * as pairs of numbers (entitlement, principal) with their lists by principal and by entitlement,
 * and what a page needs precomputed for each account (its text to search, what it holds, how many).
 */
export class SnapshotIndex {
  readonly resourceTypes: ResourceTypeLine[];
  readonly resources: ResourceLine[];
  readonly entitlements: EntitlementLine[];
  readonly resourceAt: Map<string, number>;
  readonly entitlementAt: Map<string, number>;
  /** Resource numbers of the accounts (resources with the user trait's fields), in file order. */
  readonly accounts: Int32Array;
  readonly grantEntitlement: Int32Array;
  readonly grantPrincipal: Int32Array;
  readonly byPrincipal: Adjacency;
  readonly byEntitlement: Adjacency;
  /** For a group's membership entitlement, the group's resource number; else -1. */
  readonly membershipGroup: Int32Array;
  /** For a group resource, its membership entitlement; else -1. */
  readonly groupMembership: Int32Array;
  readonly privileged: Uint8Array;
  /** Per resource: entitlements held, directly or through a team. */
  readonly holdingCount: Int32Array;
  readonly privilegedCount: Int32Array;
  /** Per entitlement: accounts (and teams) holding it. */
  readonly holderCount: Int32Array;
  /** Per account (by its place in `accounts`): display name, login, id and emails. */
  readonly searchText: SearchText;
  /** Per entitlement: display name, id and the id of the resource it is on. */
  readonly entitlementText: SearchText;

  private constructor(
    readonly start: SyncStartLine,
    readonly end: SyncEndLine,
    read: RecordsRead,
    privilegedFact: PrivilegedEntitlements,
  ) {
    const { resourceTypes, resources, entitlements } = read;
    this.resourceTypes = resourceTypes;
    this.resources = resources;
    this.entitlements = entitlements;
    this.resourceAt = read.resourceAt;
    this.entitlementAt = read.entitlementAt;
    // Grants read before their entitlement or principal are placed now; one whose ends are
    // missing (not in a complete snapshot) is left out.
    for (const g of read.pending) {
      const e = this.entitlementAt.get(g.entitlement);
      const p = this.resourceAt.get(resourceKey(g.principal.type, g.principal.id));
      if (e === undefined || p === undefined) continue;
      read.grantEntitlement.push(e);
      read.grantPrincipal.push(p);
    }
    this.grantEntitlement = Int32Array.from(read.grantEntitlement);
    this.grantPrincipal = Int32Array.from(read.grantPrincipal);
    this.byPrincipal = Adjacency.of(this.grantPrincipal, resources.length);
    this.byEntitlement = Adjacency.of(this.grantEntitlement, entitlements.length);

    const groupTypes = new Set(
      resourceTypes.filter((t) => t.traits.includes("group")).map((t) => t.id),
    );
    this.membershipGroup = new Int32Array(entitlements.length).fill(-1);
    this.groupMembership = new Int32Array(resources.length).fill(-1);
    this.privileged = new Uint8Array(entitlements.length);
    entitlements.forEach((e, i) => {
      if (isPrivileged(privilegedFact, e)) this.privileged[i] = 1;
      if (e.slug !== "member" || !groupTypes.has(e.resource.type)) return;
      const group = this.resourceAt.get(resourceKey(e.resource.type, e.resource.id));
      if (group === undefined) return;
      this.membershipGroup[i] = group;
      this.groupMembership[group] = i;
    });

    const accounts: number[] = [];
    resources.forEach((r, i) => {
      if (r.user) accounts.push(i);
    });
    this.accounts = Int32Array.from(accounts);
    this.searchText = new SearchText(
      accounts.map((i) => {
        const r = resources[i] as ResourceLine;
        return [r.displayName, r.user?.login ?? "", r.id, ...(r.user?.emails ?? [])];
      }),
    );
    this.entitlementText = new SearchText(
      entitlements.map((e) => [e.displayName, e.id, e.resource.id]),
    );
    this.holdingCount = new Int32Array(resources.length);
    this.privilegedCount = new Int32Array(resources.length);
    for (const account of this.accounts) {
      for (const holding of this.holdings(account)) {
        this.holdingCount[account] = (this.holdingCount[account] as number) + 1;
        if (this.privileged[this.grantEntitlement[holding.grant] as number])
          this.privilegedCount[account] = (this.privilegedCount[account] as number) + 1;
      }
    }
    this.holderCount = new Int32Array(entitlements.length);
    for (let e = 0; e < entitlements.length; e++) this.holderCount[e] = this.holders(e).length;
  }

  /** Reads a complete snapshot into an index (a UsageError when the file is not one). */
  static async load(
    path: string,
    privilegedFor: (connector: string) => PrivilegedEntitlements,
  ): Promise<SnapshotIndex> {
    const read: RecordsRead = {
      resourceTypes: [],
      resources: [],
      entitlements: [],
      resourceAt: new Map(),
      entitlementAt: new Map(),
      grantEntitlement: [],
      grantPrincipal: [],
      pending: [],
    };
    // A grant is kept as two numbers as soon as its ends are known (the writers put them first),
    // not as an object: 400,000 grant objects alive at once were most of the start's time in GC.
    const { start, end } = await readSnapshotFile(
      path,
      (line: BodyLine) => {
        if (line.kind === "grant") {
          const e = read.entitlementAt.get(line.entitlement);
          const p = read.resourceAt.get(resourceKey(line.principal.type, line.principal.id));
          if (e === undefined || p === undefined) read.pending.push(line);
          else {
            read.grantEntitlement.push(e);
            read.grantPrincipal.push(p);
          }
        } else if (line.kind === "resource") {
          read.resourceAt.set(resourceKey(line.type, line.id), read.resources.length);
          read.resources.push(line);
        } else if (line.kind === "entitlement") {
          read.entitlementAt.set(line.id, read.entitlements.length);
          read.entitlements.push(line);
        } else read.resourceTypes.push(line);
      },
      { checkDuplicates: true },
    );
    return new SnapshotIndex(start, end, read, privilegedFor(start.connector));
  }

  get grantCount(): number {
    return this.grantEntitlement.length;
  }

  /** A grant's id (CONTRACTS.md section 3: `{entitlementId}:{principalType}:{principalId}`). */
  grantId(grant: number): string {
    const e = this.entitlements[this.grantEntitlement[grant] as number] as EntitlementLine;
    const p = this.resources[this.grantPrincipal[grant] as number] as ResourceLine;
    return `${e.id}:${p.type}:${p.id}`;
  }

  /** Finds a grant by its id: an entitlement's id, then its principal's `type:id`. */
  grantNamed(id: string): number | undefined {
    for (let at = id.indexOf(":"); at !== -1; at = id.indexOf(":", at + 1)) {
      const e = this.entitlementAt.get(id.slice(0, at));
      const principal = e === undefined ? undefined : this.resourceAt.get(id.slice(at + 1));
      if (principal === undefined) continue;
      for (const grant of this.byPrincipal.of(principal))
        if (this.grantEntitlement[grant] === e) return grant;
    }
    return undefined;
  }

  /** What a resource holds: its own grants, and those of the teams it is a member of (nested too). */
  holdings(resource: number): Holding[] {
    const out: Holding[] = [];
    const seen = new Set<number>([resource]);
    const visit = (principal: number, via: number | undefined) => {
      for (const grant of this.byPrincipal.of(principal)) {
        out.push(via === undefined ? { grant } : { grant, via });
        const group = this.membershipGroup[this.grantEntitlement[grant] as number] as number;
        if (group >= 0 && !seen.has(group)) {
          seen.add(group);
          visit(group, group);
        }
      }
    };
    visit(resource, undefined);
    return out;
  }

  /** Who holds an entitlement: its grants' principals, and the members of a team it is granted to. */
  holders(entitlement: number): Holder[] {
    const out: Holder[] = [];
    const seen = new Set<number>();
    const visit = (e: number, via: number | undefined, through: number | undefined) => {
      for (const grant of this.byEntitlement.of(e)) {
        const resource = this.grantPrincipal[grant] as number;
        const holder: Holder = { resource, grant: through ?? grant };
        if (via !== undefined) holder.via = via;
        out.push(holder);
        const membership = this.groupMembership[resource] as number;
        if (membership >= 0 && !seen.has(resource)) {
          seen.add(resource);
          visit(membership, resource, through ?? grant);
        }
      }
    };
    visit(entitlement, undefined, undefined);
    return out;
  }

  resourceTypeName(type: string): string {
    return this.resourceTypes.find((t) => t.id === type)?.displayName ?? type;
  }
}
