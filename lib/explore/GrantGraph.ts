import type { EntitlementLine, ResourceTypeLine } from "../snapshot/records";

/** Lists by an owner's number, in two typed arrays: the owner's items are `items[start[i]..start[i+1]]`. */
export class Adjacency {
  constructor(
    readonly start: Int32Array,
    readonly items: Int32Array,
  ) {}

  /** Groups `0..owners.length` by `owners[item]`. */
  static of(owners: Int32Array, ownerCount: number): Adjacency {
    const start = new Int32Array(ownerCount + 1);
    for (const owner of owners) start[owner + 1] = (start[owner + 1] as number) + 1;
    for (let i = 0; i < ownerCount; i++)
      start[i + 1] = (start[i + 1] as number) + (start[i] as number);
    const next = start.slice(0, ownerCount);
    const items = new Int32Array(start[ownerCount] as number);
    owners.forEach((owner, item) => {
      items[(next[owner] as number)++] = item;
    });
    return new Adjacency(start, items);
  }

  of(owner: number): Int32Array {
    return this.items.subarray(this.start[owner], this.start[owner + 1]);
  }
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

/**
 * The grants as pairs of numbers (entitlement, principal), their lists by principal and by
 * entitlement, and which entitlements are a team's membership: who holds what, directly or
 * through a team (nested teams too).
 */
export class GrantGraph {
  readonly byPrincipal: Adjacency;
  #byEntitlement: Adjacency | (() => Adjacency);
  /** For a group's membership entitlement, the group's resource number; else -1. */
  readonly membershipGroup: Int32Array;
  /** For a group resource, its membership entitlement; else -1. */
  readonly groupMembership: Int32Array;

  constructor(
    readonly grantEntitlement: Int32Array,
    readonly grantPrincipal: Int32Array,
    resourceCount: number,
    resourceTypes: readonly ResourceTypeLine[],
    entitlements: readonly EntitlementLine[],
    resourceNamed: (key: string) => number | undefined,
    /** Read from an index file; `byEntitlement` may be read at its first use. */
    adjacency?: { byPrincipal: Adjacency; byEntitlement: Adjacency | (() => Adjacency) },
  ) {
    this.byPrincipal = adjacency?.byPrincipal ?? Adjacency.of(grantPrincipal, resourceCount);
    this.#byEntitlement =
      adjacency?.byEntitlement ?? Adjacency.of(grantEntitlement, entitlements.length);
    const groupTypes = new Set(
      resourceTypes.filter((t) => t.traits.includes("group")).map((t) => t.id),
    );
    this.membershipGroup = new Int32Array(entitlements.length).fill(-1);
    this.groupMembership = new Int32Array(resourceCount).fill(-1);
    entitlements.forEach((e, i) => {
      if (e.slug !== "member" || !groupTypes.has(e.resource.type)) return;
      const group = resourceNamed(resourceKey(e.resource.type, e.resource.id));
      if (group === undefined) return;
      this.membershipGroup[i] = group;
      this.groupMembership[group] = i;
    });
  }

  /** What a resource holds: its own grants, and those of the teams it is a member of (nested too). */
  holdings(resource: number): Holding[] {
    const out: Holding[] = [];
    this.eachHolding(resource, (grant, via) => {
      out.push(via < 0 ? { grant } : { grant, via });
    });
    return out;
  }

  /**
   * `holdings` one at a time, without a record each (`via` -1 for a direct grant): each team is
   * visited once, however many ways lead to it.
   */
  eachHolding(resource: number, visit: (grant: number, via: number) => void): void {
    const { start, items } = this.byPrincipal;
    let seen: Set<number> | undefined;
    const walk = (principal: number, via: number) => {
      const end = start[principal + 1] as number;
      for (let at = start[principal] as number; at < end; at++) {
        const grant = items[at] as number;
        visit(grant, via);
        const group = this.membershipGroup[this.grantEntitlement[grant] as number] as number;
        if (group < 0 || group === resource) continue;
        seen ??= new Set();
        if (seen.has(group)) continue;
        seen.add(group);
        walk(group, group);
      }
    };
    walk(resource, -1);
  }

  get byEntitlement(): Adjacency {
    if (typeof this.#byEntitlement === "function") this.#byEntitlement = this.#byEntitlement();
    return this.#byEntitlement;
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
}

export const resourceKey = (type: string, id: string) => `${type}:${id}`;
