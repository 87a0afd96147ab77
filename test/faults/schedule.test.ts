// The seeded fault schedule: a request's fault is a function of the seed, the request and its
// attempt, so the same seed hits the same requests whatever order they come in.
import { describe, expect, it } from "vitest";
import { startBlacklineSimulator } from "../../lib/simulators/blackline";
import {
  breakSchema,
  type FaultSchedule,
  faultyPage,
  scheduledFault,
} from "../../lib/simulators/faultSchedule";

const schedule: FaultSchedule = { seed: 7, share: 0.4, attempts: 2, fault: { kind: "status5xx" } };
const requests = Array.from({ length: 200 }, (_, i) => `GET /v1/teams/${i}/users?page=1`);

describe("scheduledFault", () => {
  it("hits about `share` of requests, on their first `attempts` attempts only", () => {
    const hit = requests.filter((r) => scheduledFault(schedule, r, 1));
    expect(hit.length).toBeGreaterThan(50);
    expect(hit.length).toBeLessThan(110);
    for (const request of hit) {
      expect(scheduledFault(schedule, request, 2)).toEqual({ kind: "status5xx" });
      expect(scheduledFault(schedule, request, 3)).toBeUndefined();
    }
  });

  it("depends on the seed, not on the order requests arrive in", () => {
    const forward = requests.map((r) => Boolean(scheduledFault(schedule, r, 1)));
    const backward = [...requests]
      .reverse()
      .map((r) => Boolean(scheduledFault(schedule, r, 1)))
      .reverse();
    const otherSeed = requests.map((r) => Boolean(scheduledFault({ ...schedule, seed: 8 }, r, 1)));
    expect(backward).toEqual(forward);
    expect(otherSeed).not.toEqual(forward);
  });

  it("hits only the requests `match` allows", () => {
    const matched = { ...schedule, share: 1, match: /^POST / };
    expect(scheduledFault(matched, "POST /auth", 1)).toBeDefined();
    expect(scheduledFault(matched, "GET /v1/users", 1)).toBeUndefined();
  });
});

describe("page and body faults", () => {
  const items = Array.from({ length: 10 }, (_, i) => i);

  it("duplicates: every page after the first starts with the previous page's last item", () => {
    expect(faultyPage(items, 0, 4, "duplicates")).toEqual([0, 1, 2, 3]);
    expect(faultyPage(items, 4, 4, "duplicates")).toEqual([3, 4, 5, 6, 7]);
    expect(faultyPage(items, 8, 4, "duplicates")).toEqual([7, 8, 9]);
  });

  it("alternate: pages 1, 2, 1, 2 from the third page of a list of more than two pages", () => {
    expect(faultyPage(items, 8, 4, "alternate")).toEqual([0, 1, 2, 3]);
    expect(faultyPage(items, 12, 4, "alternate")).toEqual([4, 5, 6, 7]);
    expect(faultyPage(items, 8, 5, "alternate")).toEqual([8, 9]);
  });

  it("breaks the list of resources, not SCIM's list of schema names", () => {
    const body = { schemas: ["urn:x"], Resources: [{ id: "a" }, { id: "b" }] };
    expect(breakSchema(body, "missing_id")).toEqual({ ...body, Resources: [{}, { id: "b" }] });
    expect(breakSchema(body, "wrong_type")).toEqual({
      ...body,
      Resources: [{ id: true }, { id: "b" }],
    });
    expect(breakSchema(body, "null_list")).toEqual({ ...body, Resources: null });
    expect(breakSchema({ access_token: "t" }, "null_list")).toBeUndefined();
  });

  it("a seeded schedule on a simulator: the same requests fail in two runs with the same seed", async () => {
    const statuses = async () => {
      const sim = await startBlacklineSimulator({
        size: { users: 5, teams: 1, roles: 1 },
        faults: { schedule: { ...schedule, share: 0.5, attempts: 1 } },
      });
      try {
        const answers: number[] = [];
        for (const path of requests.slice(0, 20)) {
          const url = `${sim.url}${path.slice("GET ".length)}`;
          answers.push((await fetch(url)).status);
        }
        return answers;
      } finally {
        await sim.close();
      }
    };
    const first = await statuses();
    expect(await statuses()).toEqual(first);
    expect(first.filter((s) => s >= 502).length).toBeGreaterThan(3);
    expect(first.filter((s) => s === 401).length).toBeGreaterThan(3);
  });
});
