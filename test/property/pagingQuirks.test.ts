import { readdir } from "node:fs/promises";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import {
  type BlacklinePagingQuirks,
  type BlacklineSimulator,
  startBlacklineSimulator,
} from "../../lib/simulators/blackline";
import { type ScimPagingQuirks, startValimailSimulator } from "../../lib/simulators/valimail";
import { syncBlackline } from "../helpers/blackline";
import { type ScimPeer, startScimPeer } from "../helpers/scimPeer";
import { makeTempDir } from "../helpers/tempDir";
import { syncValimail } from "../helpers/valimail";
import { expectTypedError, IO_RUNS } from "./settings";

/**
 * Paging quirks: generated tenants (sizes 0, 1, and around the page size) behind generated
 * combinations of the simulators' paging quirks, each synced through the real connector. A sync
 * ends with exactly the records of a clean sync of the same tenant, or fails, writing nothing,
 * with a message that names the quirk that makes the list unreadable; never a partial snapshot.
 * SCIM quirks run against the Valimail simulator and against scimmy (test/helpers/scimPeer.ts),
 * code nobody here wrote. Each case also says when it must be exact: a server that honours the
 * paging parameter is always read whole.
 */

type Outcome = { records: unknown[] } | { error: Error };

/** A sync's outcome; a failure must be typed and leave no snapshot. */
async function outcome(sync: (dir: string) => Promise<{ records: unknown[] }>): Promise<Outcome> {
  const dir = await makeTempDir("ac-property-paging-");
  try {
    return { records: (await sync(dir)).records };
  } catch (error) {
    expectTypedError(error);
    expect(await readdir(dir)).toEqual([]);
    return { error };
  }
}

/** Asserts the outcome: the clean records, or (when allowed) a failure matching `names`. */
function expectExactOrNamed(
  got: Outcome,
  clean: unknown[],
  failure: { allowed: boolean; names: RegExp },
) {
  if ("records" in got) {
    expect(got.records).toEqual(clean);
    return;
  }
  expect(failure.allowed, `failed where it must read the list whole: ${got.error.message}`).toBe(
    true,
  );
  expect(got.error.message).toMatch(failure.names);
}

/** Clean syncs, once per tenant. */
function memo<T>(compute: (key: string) => Promise<T>) {
  const cache = new Map<string, Promise<T>>();
  return (key: string) => {
    const hit = cache.get(key) ?? compute(key);
    cache.set(key, hit);
    return hit;
  };
}

const PAGE_SIZES: readonly number[] = [1, 2, 3, 5, 8];

/** A page size, and a list size of 0, 1, 2, around one or two pages, or anything up to 30. */
const sizes = fc.constantFrom(...PAGE_SIZES).chain((pageSize) =>
  fc.record({
    pageSize: fc.constant(pageSize),
    users: fc.oneof(
      fc.constantFrom(0, 1, 2),
      fc.constantFrom(-1, 0, 1).map((d) => Math.max(0, pageSize + d)),
      fc.constantFrom(-1, 0, 1).map((d) => Math.max(0, 2 * pageSize + d)),
      fc.nat(30),
    ),
  }),
);

const scimQuirks: fc.Arbitrary<ScimPagingQuirks> = fc.record(
  {
    paging: fc.constant(false),
    ignoreStartIndex: fc.boolean(),
    zeroBasedStartIndex: fc.boolean(),
    maxCount: fc.integer({ min: 1, max: 12 }),
    fixedCount: fc.integer({ min: 1, max: 12 }),
    omitTotal: fc.boolean(),
    itemsPerPage: fc.constantFrom("served" as const, "asked" as const),
  },
  { requiredKeys: [] },
);

/** Issue 16's server: it ignores startIndex, caps count at 50 silently, and sends no total. */
const ISSUE_16: ScimPagingQuirks = { ignoreStartIndex: true, maxCount: 50, omitTotal: true };

/** The most users one answer holds when the server ignores `startIndex`; Infinity if unpaginated. */
function firstAnswer(quirks: ScimPagingQuirks, pageSize: number): number {
  if (quirks.paging === false) return Number.POSITIVE_INFINITY;
  return Math.min(quirks.fixedCount ?? pageSize, quirks.maxCount ?? 1000);
}

/**
 * Whether a SCIM sync may fail, and what its message must name: a server that ignores
 * `startIndex` can be read only when its first answer holds every user.
 */
function scimFailure(quirks: ScimPagingQuirks, pageSize: number, users: number) {
  const ignoresPosition = quirks.paging === false || quirks.ignoreStartIndex === true;
  return {
    allowed: ignoresPosition && users > firstAnswer(quirks, pageSize),
    names: /ignores startIndex/,
  };
}

const valimailClean = memo(async (key) => {
  const sim = await startValimailSimulator({ seed: 16, users: Number(key) });
  try {
    return (await syncValimail(sim, await makeTempDir("ac-property-paging-"))).records;
  } finally {
    await sim.close();
  }
});

/** The scimmy peer holding `count` generated users (ids of mixed length, as servers mint them). */
async function scimPeerWith(count: number, quirks?: ScimPagingQuirks): Promise<ScimPeer> {
  const peer = await startScimPeer(quirks);
  for (let i = 0; i < count; i++) {
    const id = `${(i * 7919).toString(36)}-${i}`;
    peer.users.set(id, {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      id,
      userName: `user.${i}@example.com`,
      name: { givenName: `Given ${i}`, familyName: "Peer" },
      active: i % 5 !== 0,
    });
  }
  return peer;
}

const scimmyClean = memo(async (key) => {
  const peer = await scimPeerWith(Number(key));
  try {
    return (await syncValimail(peer, await makeTempDir("ac-property-paging-"))).records;
  } finally {
    await peer.close();
  }
});

const blacklineQuirks: fc.Arbitrary<BlacklinePagingQuirks> = fc.record(
  {
    maxPageSize: fc.integer({ min: 1, max: 12 }),
    ignorePaging: fc.boolean(),
    omitTotal: fc.boolean(),
  },
  { requiredKeys: [] },
);

const blacklineSize = (users: number) => ({ users, teams: 1 + (users % 4), roles: 2 });

const blacklineClean = memo(async (key) => {
  const sim = await startBlacklineSimulator({ seed: 16, size: blacklineSize(Number(key)) });
  try {
    return (await syncBlackline(sim, await makeTempDir("ac-property-paging-"))).records;
  } finally {
    await sim.close();
  }
});

let open: { close(): Promise<void> } | undefined;
afterAll(() => open?.close());

describe("paging quirks (property)", () => {
  it("Valimail simulator: every quirk gives the clean snapshot or a failure naming it", async () => {
    await fc.assert(
      fc.asyncProperty(sizes, scimQuirks, async ({ pageSize, users }, quirks) => {
        const clean = await valimailClean(String(users));
        const sim = await startValimailSimulator({ seed: 16, users, ...quirks });
        open = sim;
        const env = { CONNECTOR_EMAILAUTH_PAGE_SIZE: String(pageSize) };
        const got = await outcome((dir) => syncValimail(sim, dir, { env }));
        await sim.close();
        expectExactOrNamed(got, clean, scimFailure(quirks, pageSize, users));
      }),
      { ...IO_RUNS, examples: [[{ pageSize: 1000, users: 180 }, ISSUE_16]] },
    );
  });

  it("scimmy peer: the same quirks in front of scimmy give the clean snapshot or a failure naming them", async () => {
    await fc.assert(
      fc.asyncProperty(sizes, scimQuirks, async ({ pageSize, users }, quirks) => {
        const clean = await scimmyClean(String(users));
        const peer = await scimPeerWith(users, quirks);
        open = peer;
        const env = { CONNECTOR_EMAILAUTH_PAGE_SIZE: String(pageSize) };
        const got = await outcome((dir) => syncValimail(peer, dir, { env }));
        await peer.close();
        const failure = scimFailure(quirks, pageSize, users);
        // scimmy answers a startIndex past the list's end with its first page again; without
        // totalResults that is a page repeated where an empty one should be.
        const pastTheEnd = quirks.omitTotal === true;
        expectExactOrNamed(got, clean, {
          allowed: failure.allowed || pastTheEnd,
          names: pastTheEnd ? /sends no totalResults/ : failure.names,
        });
      }),
      {
        ...IO_RUNS,
        examples: [
          [{ pageSize: 1000, users: 180 }, ISSUE_16],
          [{ pageSize: 5, users: 10 }, { omitTotal: true }],
        ],
      },
    );
  });

  it("BlackLine simulator: every quirk gives the clean snapshot or a failure naming it", async () => {
    await fc.assert(
      fc.asyncProperty(sizes, blacklineQuirks, async ({ pageSize, users }, quirks) => {
        const clean = await blacklineClean(String(users));
        const sim: BlacklineSimulator = await startBlacklineSimulator({
          seed: 16,
          size: blacklineSize(users),
          ...quirks,
        });
        open = sim;
        const env = { CONNECTOR_ACCOUNTING_PAGE_SIZE: String(pageSize) };
        const got = await outcome((dir) => syncBlackline(sim, dir, { env }));
        await sim.close();
        // Ignoring `page`, a server is read whole only when each list fits one page and the page
        // says how many items the list has; without totalItems, users (if any) cannot be proven.
        if (quirks.ignorePaging && quirks.omitTotal && users > 0) {
          expect("error" in got, "a list proven without a total").toBe(true);
        }
        expectExactOrNamed(got, clean, {
          allowed: quirks.ignorePaging === true,
          names: /ignores the page parameter/,
        });
      }),
      {
        ...IO_RUNS,
        examples: [
          [
            { pageSize: 100, users: 40 },
            { maxPageSize: 15, omitTotal: true },
          ],
        ],
      },
    );
  });
});
