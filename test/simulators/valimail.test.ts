/** The Valimail simulator follows the API description: checked with plain fetch, no client code. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startValimailSimulator,
  type ValimailSimulator,
  type ValimailSimulatorOptions,
} from "../../lib/simulators/valimail";

const EXT = "urn:ietf:params:scim:schemas:extension:valimailuserextension:2.0:User";
let sim: ValimailSimulator;
let token: string;
let base: string;

async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/scim+json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    body: (await response.json()) as Record<string, unknown>,
  };
}

beforeAll(async () => {
  sim = await startValimailSimulator({ seed: 2, users: 30, marketer: false });
  const auth = await fetch(`${sim.url}/auth`, {
    method: "POST",
    body: JSON.stringify({
      "client-id": sim.credentials.clientId,
      "app-id": sim.credentials.appId,
    }),
  });
  const body = (await auth.json()) as { token: string; "expires-at": string };
  token = body.token;
  expect(Date.parse(body["expires-at"])).toBeGreaterThan(Date.now());
  base = `${sim.url}/accounts/${sim.slug}/scim/v2/Users`;
});
afterAll(() => sim.close());

describe("Valimail simulator", () => {
  it("/auth rejects a wrong key with its non-SCIM error body", async () => {
    const response = await fetch(`${sim.url}/auth`, {
      method: "POST",
      body: JSON.stringify({ "client-id": "x", "app-id": "y" }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      message: "invalid client-id or app-id",
      status: "400",
      call: "api",
    });
  });

  it("accepts PATCH replace on active and on the member type in both spellings, and nothing else", async () => {
    const [id] = [...sim.users.keys()];
    const op = (o: string, path: string, value: unknown) => ({
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: o, path, value }],
    });

    expect((await call("PATCH", `/${id}`, op("replace", "active", false))).status).toBe(200);
    expect(
      (await call("PATCH", `/${id}`, op("replace", `${EXT}.memberType`, "owner"))).status,
    ).toBe(200);
    expect(
      (await call("PATCH", `/${id}`, op("replace", `${EXT}:memberType`, "member"))).status,
    ).toBe(200);
    for (const bad of [
      op("add", "active", true),
      op("remove", "active", null),
      op("replace", "userName", "x@example.com"),
      op("replace", `${EXT}.memberType`, "marketer"),
    ]) {
      const answer = await call("PATCH", `/${id}`, bad);
      expect(answer.status).toBe(400);
      expect(answer.body.detail).toBe("Invalid PATCH operation: Unsupported operation type");
    }
    expect(sim.users.get(id ?? "")).toMatchObject({ active: false, memberType: "member" });
  });

  it("offers no PUT and no DELETE", async () => {
    const [id] = [...sim.users.keys()];
    expect((await call("PUT", `/${id}`, {})).status).toBe(405);
    expect((await call("DELETE", `/${id}`)).status).toBe(405);
    expect(sim.users.has(id ?? "")).toBe(true);
  });

  it("filters on userName and the member type, and rejects a bad filter as invalidFilter", async () => {
    const user = [...sim.users.values()][3];
    const byName = await call(
      "GET",
      `?filter=${encodeURIComponent(`userName eq "${user?.userName.toUpperCase()}"`)}`,
    );
    const owners = await call(
      "GET",
      `?filter=${encodeURIComponent(`${EXT}.memberType eq "owner"`)}`,
    );
    const bad = await call("GET", `?filter=${encodeURIComponent("userName zz")}`);

    expect((byName.body.Resources as unknown[]).length).toBe(1);
    expect(owners.body.totalResults).toBe(
      [...sim.users.values()].filter((u) => u.memberType === "owner").length,
    );
    expect(bad.status).toBe(400);
    expect(bad.body.scimType).toBe("invalidFilter");
  });

  it("answers SCIM errors: 404 for an unknown id, 409 for a duplicate, 403 for another account", async () => {
    const user = [...sim.users.values()][0];
    const missing = await call("GET", "/0123456789");
    const duplicate = await call("POST", "", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User", EXT],
      userName: user?.userName,
      name: { givenName: "A", familyName: "B" },
    });
    const other = await fetch(`${sim.url}/accounts/someone-else/scim/v2/Users`, {
      headers: { authorization: `Bearer ${token}` },
    });

    expect(missing).toMatchObject({
      status: 404,
      type: "application/scim+json",
      body: { status: "404", detail: "User with ID 0123456789 not found" },
    });
    expect(duplicate).toMatchObject({
      status: 409,
      body: { detail: `User with email ${user?.userName} already exists` },
    });
    expect(duplicate.body.id).toBeUndefined();
    expect(other.status).toBe(403);
  });
});

describe("Valimail simulator paging quirks", () => {
  /** The ids and paging fields of one list answer of a fresh 12-user simulator with `quirks`. */
  async function page(quirks: ValimailSimulatorOptions, query: string) {
    const quirky = await startValimailSimulator({ seed: 5, users: 12, ...quirks });
    try {
      const auth = await fetch(`${quirky.url}/auth`, {
        method: "POST",
        body: JSON.stringify({
          "client-id": quirky.credentials.clientId,
          "app-id": quirky.credentials.appId,
        }),
      });
      const { token: bearer } = (await auth.json()) as { token: string };
      const response = await fetch(`${quirky.url}/accounts/${quirky.slug}/scim/v2/Users?${query}`, {
        headers: { authorization: `Bearer ${bearer}` },
      });
      const body = (await response.json()) as {
        totalResults?: number;
        itemsPerPage?: number;
        Resources: Array<{ id: string }>;
      };
      const all = [...quirky.users.keys()];
      return {
        positions: body.Resources.map((r) => all.indexOf(r.id)),
        totalResults: body.totalResults,
        itemsPerPage: body.itemsPerPage,
      };
    } finally {
      await quirky.close();
    }
  }

  it("pages as RFC 7644 says by default: startIndex from 1, totalResults and the true itemsPerPage", async () => {
    expect(await page({}, "startIndex=11&count=5")).toEqual({
      positions: [10, 11],
      totalResults: 12,
      itemsPerPage: 2,
    });
  });

  it("departs from it one quirk at a time", async () => {
    const at = async (quirks: ValimailSimulatorOptions, query = "startIndex=3&count=4") =>
      (await page(quirks, query)).positions;

    expect(await at({ paging: false })).toHaveLength(12);
    expect(await at({ ignoreStartIndex: true })).toEqual([0, 1, 2, 3]);
    expect(await at({ zeroBasedStartIndex: true })).toEqual([3, 4, 5, 6]);
    expect(await at({ maxCount: 2 })).toEqual([2, 3]);
    expect(await at({ fixedCount: 6 })).toEqual([2, 3, 4, 5, 6, 7]);
    expect(await at({ fixedCount: 6, maxCount: 5 })).toEqual([2, 3, 4, 5, 6]);
    expect((await page({ omitTotal: true }, "count=4")).totalResults).toBeUndefined();
    expect(await page({ itemsPerPage: "asked" }, "startIndex=11&count=5")).toMatchObject({
      positions: [10, 11],
      itemsPerPage: 5,
    });
  });
});
