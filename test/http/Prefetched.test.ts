import { describe, expect, it } from "vitest";
import { askingAhead, newRequestContext, Prefetched } from "../../lib/http";

describe("Prefetched", () => {
  it("starts each key once and hands its answer over once", async () => {
    const prefetched = new Prefetched();
    let asked = 0;
    const ask = async () => `answer ${++asked}`;

    prefetched.start("page 2", ask);
    prefetched.start("page 2", ask);

    expect(asked).toBe(1);
    await expect(prefetched.take<string>("page 2")).resolves.toBe("answer 1");
    expect(prefetched.take("page 2")).toBeUndefined();
    expect(prefetched.take("page 3")).toBeUndefined();
  });

  it("hands a failure to whoever takes it, and one nobody takes goes unreported", async () => {
    const prefetched = new Prefetched();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      prefetched.start("taken", async () => {
        throw new Error("503 from the upstream");
      });
      prefetched.start("never taken", async () => {
        throw new Error("the list failed before this page");
      });
      await expect(prefetched.take("taken")).rejects.toThrow("503 from the upstream");
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });
});

describe("askingAhead", () => {
  it("puts pages asked for ahead after every list's current page and before memberships", () => {
    // A list's page jobs run at priority 1, memberships at the default 0 (runLocalSync).
    const list = newRequestContext({ priority: 1 });

    expect(askingAhead(list).priority).toBe(0.5);
    expect(askingAhead(list).counters).toBe(list.counters);
    expect(askingAhead(newRequestContext()).priority).toBe(-0.5);
  });
});
